/**
 * The {@code rdma://} transport: a stream protocol engine that moves bytes by one-sided writes into a receive ring
 * the peer registered and advertised (with credits for backpressure) and, for large reads, straight into the
 * reader's advertised buffer; plus one-sided remote memory. The engine runs on any provider of
 * {@link io.rdmacomm.rdma.spi}, chosen by the endpoint option {@code provider} ({@code ucx} by default).
 */
package io.rdmacomm.rdma;
