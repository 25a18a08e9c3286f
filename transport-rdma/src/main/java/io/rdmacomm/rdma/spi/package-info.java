/**
 * The narrow provider SPI (version 2) the RDMA protocol engine is written against, shaped after verbs so that UCX
 * and DiSNI can implement it. A provider opens one shared {@link io.rdmacomm.rdma.spi.RdmaNode node} per interface
 * and process; the node creates {@link io.rdmacomm.rdma.spi.RdmaChannel channels}, each with a local id that routes
 * the peer's messages. The provider never listens on the network: the engine's bootstrap socket carries node
 * addresses and channel ids, then both sides connect their channels. Channels register and deregister memory, pack
 * a region into a descriptor and unpack a peer's, send two-sided control messages, write one-sidedly into peer
 * memory followed by a notification that arrives only after the data is placed, and read one-sidedly. Providers are
 * found with {@link java.util.ServiceLoader}; the endpoint option {@code provider} names one
 * ({@link io.rdmacomm.rdma.spi.RdmaProvider#name()}) or a family, whose available provider of the highest
 * {@link io.rdmacomm.rdma.spi.RdmaProvider#priority() priority} runs.
 */
package io.rdmacomm.rdma.spi;
