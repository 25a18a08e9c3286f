/**
 * UCX common: what the two UCX providers of {@code rdma://} share, {@code ucx-jucx} (package
 * {@code io.rdmacomm.rdma.ucx.jucx}, JDK 17+) and {@code ucx-ffm} (package {@code io.rdmacomm.rdma.ucx.ffm}, JDK
 * 22+). Their {@link io.rdmacomm.rdma.ucx.UcxWire wire format}, the choice of UCX transports and network devices
 * ({@link io.rdmacomm.rdma.ucx.UcxTransports}), the endpoints a node's channels share per peer
 * ({@link io.rdmacomm.rdma.ucx.SharedEndpoints}) and the process's nodes ({@link io.rdmacomm.rdma.ucx.NodeRegistry});
 * and the bases of what each provider implements on its binding: {@link io.rdmacomm.rdma.ucx.UcxProvider},
 * {@link io.rdmacomm.rdma.ucx.UcxChannel}, {@link io.rdmacomm.rdma.ucx.UcxMemory} and the node's progress thread
 * {@link io.rdmacomm.rdma.ucx.UcxProgress}. It binds no UCX library itself and builds on JDK 17.
 */
package io.rdmacomm.rdma.ucx;
