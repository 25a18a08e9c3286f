/**
 * The narrow provider SPI the RDMA protocol engine is written against, shaped after verbs so that UCX (JUCX) and
 * DiSNI can implement it: register and deregister memory, pack a region into a descriptor and unpack a peer's,
 * send two-sided control messages, write one-sided into peer memory followed by a notification that arrives only
 * after the data is placed, read one-sided, progress completions, connect and accept. Providers are found with
 * {@link java.util.ServiceLoader} by their {@link io.rdmacomm.rdma.spi.RdmaProvider#name() name}.
 */
package io.rdmacomm.rdma.spi;
