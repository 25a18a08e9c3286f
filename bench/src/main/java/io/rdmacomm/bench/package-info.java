/**
 * The raw baselines our communicators are compared with, measured by the harness they share with
 * {@code clientcomm bench} ({@link io.rdmacomm.clientcomm.bench.LatencyHarness},
 * {@link io.rdmacomm.clientcomm.bench.BandwidthHarness}, and here {@link io.rdmacomm.bench.ServeHarness}: options,
 * warm-up, measurement, JSON) so that ours and a baseline differ only in what they measure.
 * {@link io.rdmacomm.clientcomm.bench.BenchCommand} is {@code clientcomm bench}: latency percentiles (HdrHistogram)
 * with the bytes allocated per round trip, and streaming bandwidth, over any communicator against servercomm.
 * {@link io.rdmacomm.bench.BaselineMain} ({@code bench/baseline}) runs the baselines {@code bench/compare} measures
 * in the same session with the same JVM and flags: Java NIO sockets for {@code tcp://} ({@code NioBaseline}) and
 * JUCX alone for {@code rdma://} ({@code JucxBaseline}: tagged echo and sink, put + flush), next to
 * {@code ucx_perftest}, whose output {@link io.rdmacomm.bench.UcxPerftest} reads;
 * {@link io.rdmacomm.bench.CompareReport} turns the runs into the table. Every figure is read as a ratio to what
 * the baseline achieves on the same machine at the same moment. Measured loops reuse their buffers and record into
 * a preallocated histogram so that the harness itself allocates nothing per round trip.
 */
package io.rdmacomm.bench;
