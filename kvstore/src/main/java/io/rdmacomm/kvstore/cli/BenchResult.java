package io.rdmacomm.kvstore.cli;

/**
 * One {@code kv-client bench} run, as printed by {@code --json} (snake_case names). Latencies are per operation,
 * in microseconds, from sending the request to having the answer; allocation is the client threads' heap allocation
 * during the measured operations, per operation.
 */
record BenchResult(String path, String dataEndpoint, int clients, int threads, long valueSize, double getRatio,
        long keys, long ops, double seconds, double opsPerSec, double p50Us, double p99Us, long gets, double getP50Us,
        double getP99Us, long puts, double putP50Us, double putP99Us, double allocatedBytesPerOp) {
}
