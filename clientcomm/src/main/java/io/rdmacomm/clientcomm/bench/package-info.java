/**
 * The {@code clientcomm bench} commands: round-trip latency percentiles (HdrHistogram) with the bytes allocated per
 * round trip, and streaming bandwidth to a sink, measured over any communicator against servercomm; and the raw
 * Java NIO baselines ({@code raw-serve}, {@code raw-latency}, {@code raw-bandwidth}) that {@code bench/compare}
 * runs in the same session, with the same JVM and flags, so that every figure is read as a ratio to what the bare
 * socket achieves on the same machine at the same moment. Measured loops reuse their buffers and record into a
 * preallocated histogram so that the harness itself allocates nothing per round trip.
 */
package io.rdmacomm.clientcomm.bench;
