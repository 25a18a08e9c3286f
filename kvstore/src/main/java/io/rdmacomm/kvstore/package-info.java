/**
 * A key-value store on the communicators, after the KV-RDMA proof of concept (seed 004): a gRPC control plane
 * (sessions, buffer registration, metadata, statistics, administration) and a data plane on any communicator
 * endpoint ({@code rdma://}, {@code tcp://}, {@code local://}) where values move by one-sided operations between
 * the server's memory pool and the client's registered buffer. Entry points: {@link io.rdmacomm.kvstore.KvServer},
 * {@link io.rdmacomm.kvstore.KvClient}, {@link io.rdmacomm.kvstore.KvControlClient}.
 */
package io.rdmacomm.kvstore;
