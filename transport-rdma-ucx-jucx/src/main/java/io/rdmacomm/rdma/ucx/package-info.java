/**
 * The {@code ucx} provider of the rdma transport, on JUCX 1.12.1 and the system's libucx: one UCP context per
 * process, one thread-safe worker per client connection or per server (shared by the connections it accepted),
 * each progressed by its own {@code rdmacomm-rdma-progress} thread that sleeps in {@code ucp_worker_wait}; control
 * messages are active messages; one-sided writes are put, flush, then the notification, except where UCX_TLS
 * limits UCX to tcp, where the payload rides in the notification's active message.
 */
package io.rdmacomm.rdma.ucx;
