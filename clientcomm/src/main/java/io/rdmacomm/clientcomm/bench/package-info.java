/**
 * {@code clientcomm bench} ({@link io.rdmacomm.clientcomm.bench.BenchCommand}): latency percentiles (HdrHistogram)
 * with the bytes allocated per round trip, and streaming bandwidth, over any communicator against servercomm; and
 * the harness it shares with the raw baselines of module {@code bench} ({@code io.rdmacomm.bench.BaselineMain},
 * {@code bench/baseline}): one harness per test ({@link io.rdmacomm.clientcomm.bench.LatencyHarness},
 * {@link io.rdmacomm.clientcomm.bench.BandwidthHarness}: options, warm-up, measurement, JSON) so that ours and a
 * baseline differ only in what they measure. Measured loops reuse their buffers and record into a preallocated
 * histogram so that the harness itself allocates nothing per round trip.
 */
package io.rdmacomm.clientcomm.bench;
