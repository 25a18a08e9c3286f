/**
 * The {@code ucx-jucx} provider of the rdma transport, on JUCX 1.12.1 and the system's libucx, built on what both
 * UCX providers share ({@code io.rdmacomm.rdma.ucx}): per process, one node per
 * side (client, server) and interface, each a UCP context restricted to that interface's devices with one
 * thread-safe worker, progressed by its own {@code rdmacomm-rdma-progress-ucx-*} thread that sleeps in
 * {@code ucp_worker_wait}, and shared by all connections of that side; endpoints are created from the peer's worker
 * address, which the engine's bootstrap carries; control messages are active messages routed by channel id;
 * one-sided writes are put, flush, then the notification, except where UCX_TLS limits UCX to tcp, where the
 * payload rides in the notification's active message. Classes are named in parallel with ucx-ffm's ({@code Jucx*},
 * {@code Ffm*}).
 */
package io.rdmacomm.rdma.ucx.jucx;
