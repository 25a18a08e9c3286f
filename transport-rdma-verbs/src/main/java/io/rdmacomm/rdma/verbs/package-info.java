/**
 * The {@code verbs} provider of the RDMA engine, on libibverbs and librdmacm through DiSNI 2.1: one RC queue pair per
 * connection driven through DiSNI's stateful verb calls, receive buffers pre-posted with credit-based flow control,
 * notified writes as an RDMA WRITE chained with a SEND, reads as RDMA READ, rdma-cm driven by the provider's own
 * thread under its own deadlines, one node per side and interface that binds queue pairs to the engine's channels
 * ({@code VerbsNode}), and an availability probe that names what is missing. All DiSNI data-path calls
 * go through the package-private {@code Verbs} seam, which is where the unit tests stand in; nothing here has run
 * on an RDMA device. Only {@link io.rdmacomm.rdma.verbs.VerbsProvider} is public.
 */
package io.rdmacomm.rdma.verbs;
