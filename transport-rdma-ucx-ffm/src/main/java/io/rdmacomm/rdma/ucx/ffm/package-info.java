/**
 * The {@code ucx-ffm} provider of {@code rdma://}: UCX through the project's own binding to libucp on
 * {@code java.lang.foreign} (module {@code ucx-ffm}), for JDK 22 and later. One node per side and interface in a
 * process (a UCP context, one worker and one progress thread) carries every channel of that side; endpoints are made
 * from worker addresses (one per peer worker), and active messages are routed to channels by the receiver's channel
 * id at the start of their header. Built on what both UCX providers share ({@code io.rdmacomm.rdma.ucx}).
 */
package io.rdmacomm.rdma.ucx.ffm;
