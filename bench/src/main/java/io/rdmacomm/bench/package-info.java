/**
 * The {@code clientcomm bench} commands: round-trip latency percentiles (HdrHistogram) with the bytes allocated per
 * round trip, and streaming bandwidth to a sink, measured over any communicator against servercomm; and the raw
 * baselines that {@code bench/compare} runs in the same session, with the same JVM and flags: Java NIO sockets for
 * {@code tcp://} ({@code raw-serve}, {@code raw-latency}, {@code raw-bandwidth}) and JUCX alone for {@code rdma://}
 * ({@code raw-ucx-serve}, {@code raw-ucx-latency}, {@code raw-ucx-bandwidth}), the latter next to
 * {@code ucx_perftest}, whose output {@link io.rdmacomm.bench.UcxPerftest} reads. Every figure is read
 * as a ratio to what the baseline achieves on the same machine at the same moment. Measured loops reuse their
 * buffers and record into a preallocated histogram so that the harness itself allocates nothing per round trip.
 */
package io.rdmacomm.bench;
