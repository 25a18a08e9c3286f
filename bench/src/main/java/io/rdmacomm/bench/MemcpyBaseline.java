package io.rdmacomm.bench;

import io.rdmacomm.cli.Cli;
import io.rdmacomm.clientcomm.bench.BandwidthResult;
import io.rdmacomm.clientcomm.bench.BulkSender;
import io.rdmacomm.clientcomm.bench.Messages;
import io.rdmacomm.clientcomm.bench.Options;
import io.rdmacomm.clientcomm.bench.Progress;
import io.rdmacomm.clientcomm.bench.Runs;
import java.nio.ByteBuffer;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The ceiling of the 1 MiB rows on one host: one thread copying SIZE bytes at a time from one off-heap buffer into
 * another (a direct ByteBuffer's bulk put, which copies with Unsafe.copyMemory: a memcpy), WARMUP bytes untimed, then TOTAL timed. The destination cycles
 * through SPAN bytes: with SPAN = SIZE (1 MiB) the same 1 MiB is rewritten, which stays in the cache as a 1 MiB
 * message buffer reused by a benchmark does; with 64 MiB it goes to memory.
 */
@Command(name = "memcpy", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "memcpy ceiling: one thread copying SIZE-byte blocks between off-heap buffers.",
            "The source is SIZE bytes, the destination SPAN bytes written block after block, round-robin; GB/s as "
                + "the bandwidth commands (10^9 bytes/s), WARMUP bytes untimed first."})
final class MemcpyBaseline implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    Options.Bandwidth bandwidth;

    @Mixin
    Options.Output output;

    @Option(names = "--span", paramLabel = "BYTES", defaultValue = "1m", converter = Cli.SizeConverter.class,
            description = "destination bytes cycled through, a multiple of --size (default: ${DEFAULT-VALUE})")
    long span;

    @Override
    public Integer call() throws Exception {
        bandwidth.validate(spec);
        int size = (int) bandwidth.size;
        Options.check(spec, span >= size && span % size == 0, "--span must be a multiple of --size, got " + span);
        Options.check(spec, span <= Integer.MAX_VALUE, "--span must be below 2 GiB, got " + span);
        ByteBuffer src = Messages.pattern(size);
        ByteBuffer dst = ByteBuffer.allocateDirect((int) span);
        int[] offset = {0};
        BulkSender copier = new BulkSender() {
            private long copied;

            @Override
            public void write(ByteBuffer b) {
                int n = b.remaining();
                dst.put(offset[0], src, 0, n);
                offset[0] = offset[0] + size >= span ? 0 : offset[0] + size;
                b.position(b.limit());
                copied += n;
            }

            @Override
            public long awaitAck() {
                return copied;
            }
        };
        long nanos = Runs.bandwidth(copier, ByteBuffer.allocateDirect(size), bandwidth.warmup, bandwidth.total,
                Progress.silent());
        BandwidthResult result = BandwidthResult.of("memcpy", "one-thread", "span=" + span, size,
                bandwidth.total, bandwidth.warmup, nanos);
        output.print(spec, result, result.describe());
        return 0;
    }
}
