package io.rdmacomm.bench;

import io.aeron.Aeron;
import io.aeron.ChannelUriStringBuilder;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.rdmacomm.clientcomm.bench.AllocationMeter;
import io.rdmacomm.clientcomm.bench.BandwidthResult;
import io.rdmacomm.clientcomm.bench.LatencyHarness;
import io.rdmacomm.clientcomm.bench.Options;
import io.rdmacomm.clientcomm.bench.RoundTrip;
import io.rdmacomm.clientcomm.bench.Runs;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The Java same-host anchor of the rdma:// rows: an Aeron IPC ping-pong (io.aeron:aeron-all) between two JVMs, as
 * ours runs between servercomm and clientcomm. {@code aeron-pong} embeds the media driver (threading mode SHARED:
 * one driver thread, the mode for a host with few cores; on IPC the driver only sets up the log buffers, the
 * messages go from publication to subscription through the shared log buffer in /dev/shm) and echoes every message
 * of stream 1001 on stream 1002, spinning on its subscription; {@code aeron-latency} connects to that driver's
 * directory and measures round trips as ours ({@link Runs#latency}), spinning on its subscription too. Both offer
 * with {@link Publication#offer} from a buffer prepared once.
 */
final class AeronBaseline {
    static final String TRANSPORT = "aeron-ipc";
    static final String CHANNEL = new ChannelUriStringBuilder().media("ipc").build();
    static final int PING_STREAM = 1001;
    static final int PONG_STREAM = 1002;
    static final int SINK_STREAM = 1003;
    /** In a sink message: the long at this offset is non-zero in the last message of a batch. */
    static final int LAST_OFFSET = 8;

    private AeronBaseline() {
    }

    @Command(name = "aeron-pong", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
            description = {
                "Server of the Aeron IPC ping-pong: an embedded media driver (SHARED) and an echo.",
                "Prints 'listening aeron:ipc?dir=DIR' once the driver runs (DIR: its directory, for aeron-latency "
                    + "--dir); echoes stream 1001 on stream 1002 until SIGINT or SIGTERM, then deletes DIR."})
    static final class Pong implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--dir", paramLabel = "DIR",
                description = "the media driver's directory (default: /dev/shm/rdmacomm-aeron-PID)")
        String dir;

        @Option(names = "--sink", description = "instead of echoing, count the messages of stream 1003 and answer "
                + "the last of each batch with the batch's count on stream 1002 (for aeron-throughput)")
        boolean sink;

        private long counted;
        /** Idle polls between clock reads, how long an idle pong spins before it parks, and each park's slice. */
        private static final int IDLE_CLOCK_EVERY = 1024;
        private static final long IDLE_SPIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
        private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

        private volatile boolean running = true;

        @Override
        public Integer call() throws Exception {
            String directory = dir != null ? dir : "/dev/shm/rdmacomm-aeron-" + ProcessHandle.current().pid();
            MediaDriver.Context context = new MediaDriver.Context().aeronDirectoryName(directory)
                    .threadingMode(ThreadingMode.SHARED).dirDeleteOnStart(true).dirDeleteOnShutdown(true);
            CountDownLatch done = new CountDownLatch(1);
            try (MediaDriver driver = MediaDriver.launch(context);
                    Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName()));
                    Subscription pings = aeron.addSubscription(CHANNEL, sink ? SINK_STREAM : PING_STREAM);
                    Publication pongs = aeron.addPublication(CHANNEL, PONG_STREAM)) {
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    running = false;
                    try {
                        done.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "aeron-pong-shutdown"));
                spec.commandLine().getOut().println("listening aeron:ipc?dir=" + driver.aeronDirectoryName());
                spec.commandLine().getOut().flush();
                UnsafeBuffer ack = new UnsafeBuffer(ByteBuffer.allocateDirect(8));
                FragmentHandler echo = (buffer, offset, length, header) -> {
                    while (pongs.offer(buffer, offset, length) < 0) {
                        if (!running) {
                            return;
                        }
                        Thread.onSpinWait();
                    }
                };
                FragmentHandler count = (buffer, offset, length, header) -> {
                    counted++;
                    if (length >= LAST_OFFSET + 8 && buffer.getLong(offset + LAST_OFFSET) != 0) {
                        ack.putLong(0, counted);
                        counted = 0;
                        while (pongs.offer(ack, 0, 8) < 0) {
                            if (!running) {
                                return;
                            }
                            Thread.onSpinWait();
                        }
                    }
                };
                FragmentHandler handler = sink ? count : echo;
                int limit = sink ? 256 : 1;
                // spins while there is traffic, as ours does with busyPoll=10ms, and parks in short slices once
                // idle for that long: a server spinning between the rows' runs would take one of the machine's
                // cores from the other side of the row (ours' runs) on a small machine
                long idleSince = 0;
                int idlePolls = 0;
                while (running) {
                    if (pings.poll(handler, limit) > 0) {
                        idleSince = 0;
                        idlePolls = 0;
                        continue;
                    }
                    if ((++idlePolls & (IDLE_CLOCK_EVERY - 1)) != 0) {
                        Thread.onSpinWait();
                        continue;
                    }
                    long now = System.nanoTime();
                    if (idleSince == 0) {
                        idleSince = now;
                    } else if (now - idleSince > IDLE_SPIN_NANOS) {
                        LockSupport.parkNanos(IDLE_PARK_NANOS);
                    }
                }
            } finally {
                done.countDown();
            }
            return 0;
        }
    }

    /** Waits until both directions are connected to the pong's media driver, at most 10 s. */
    static void awaitConnected(Publication out, Subscription in, String who, String dir)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!out.isConnected() || !in.isConnected()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException(who + " did not connect within 10 s (directory " + dir + ")");
            }
            Thread.sleep(1);
        }
    }

    @Command(name = "aeron-latency", mixinStandardHelpOptions = true, sortOptions = false,
            usageHelpAutoWidth = true,
            description = {
                "Aeron IPC ping-pong against 'aeron-pong': the Java same-host anchor of the rdma:// latency rows.",
                "Offers SIZE bytes on stream 1001 and spins on stream 1002 until they come back; warm-up, "
                    + "percentiles and allocation as 'clientcomm bench latency'."})
    static final class Latency implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--dir", paramLabel = "DIR", required = true,
                description = "the directory of aeron-pong's media driver (its 'listening' line)")
        String dir;

        @Mixin
        Options.Latency latency;

        @Mixin
        Options.Output output;

        @Override
        public Integer call() throws Exception {
            latency.validate(spec);
            AllocationMeter meter = AllocationMeter.create();
            try (Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir));
                    Publication pings = aeron.addPublication(CHANNEL, PING_STREAM);
                    Subscription pongs = aeron.addSubscription(CHANNEL, PONG_STREAM)) {
                awaitConnected(pings, pongs, "aeron-pong", dir);
                LatencyHarness.measure(spec, latency, output, meter, new PingPong(pings, pongs, (int) latency.size),
                        TRANSPORT, "busy-poll", "aeron:ipc?dir=" + dir);
            }
            return 0;
        }
    }

    @Command(name = "aeron-throughput", mixinStandardHelpOptions = true, sortOptions = false,
            usageHelpAutoWidth = true,
            description = {
                "Aeron IPC message rate against 'aeron-pong --sink': SIZE-byte offers, one after another.",
                "Offers WARMUP / SIZE messages untimed, then TOTAL / SIZE timed, on stream 1003, each batch's last "
                    + "one flagged; timed from the first timed offer to the sink's count of that batch on stream "
                    + "1002. Prints the fields of the bandwidth commands, messages_per_s among them."})
    static final class Throughput implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--dir", paramLabel = "DIR", required = true,
                description = "the directory of aeron-pong's media driver (its 'listening' line)")
        String dir;

        @Mixin
        Options.Bandwidth bandwidth;

        @Mixin
        Options.Output output;

        private long acked = -1;

        @Override
        public Integer call() throws Exception {
            bandwidth.validate(spec);
            int size = (int) bandwidth.size;
            Options.check(spec, size >= LAST_OFFSET + 8, "--size must be at least 16 bytes (the batch flag)");
            try (Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir));
                    Publication messages = aeron.addPublication(CHANNEL, SINK_STREAM);
                    Subscription acks = aeron.addSubscription(CHANNEL, PONG_STREAM)) {
                awaitConnected(messages, acks, "aeron-pong --sink", dir);
                UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
                FragmentHandler onAck = (buffer, offset, length, header) -> acked = buffer.getLong(offset);
                long warm = bandwidth.warmup / size;
                long timed = Math.max(1, bandwidth.total / size);
                if (warm > 0) {
                    batch(messages, acks, message, size, warm, onAck);
                }
                long start = System.nanoTime();
                batch(messages, acks, message, size, timed, onAck);
                long nanos = System.nanoTime() - start;
                BandwidthResult result = BandwidthResult.of(TRANSPORT, "busy-poll", "aeron:ipc?dir=" + dir, size,
                        timed * size, warm * size, nanos);
                output.print(spec, result, result.describe());
            }
            return 0;
        }

        private void batch(Publication messages, Subscription acks, UnsafeBuffer message, int size, long count,
                FragmentHandler onAck) throws IOException {
            message.putLong(LAST_OFFSET, 0);
            for (long i = 0; i < count; i++) {
                if (i == count - 1) {
                    message.putLong(LAST_OFFSET, 1);
                }
                message.putLong(0, i);
                while (messages.offer(message, 0, size) < 0) {
                    if (messages.isClosed()) {
                        throw new IOException("the publication closed");
                    }
                    Thread.onSpinWait();
                }
            }
            acked = -1;
            while (acked < 0) {
                if (acks.poll(onAck, 1) == 0) {
                    Thread.onSpinWait();
                }
            }
            if (acked != count) {
                throw new IOException("the sink counted " + acked + " messages, expected " + count);
            }
        }
    }

    /** One ping and its pong; the buffers and the handler are made once. */
    static final class PingPong implements RoundTrip, FragmentHandler {
        private final Publication pings;
        private final Subscription pongs;
        private final UnsafeBuffer message;
        private final int size;
        private int received = -1;
        private long sequence;
        private long echoed;

        PingPong(Publication pings, Subscription pongs, int size) {
            this.pings = pings;
            this.pongs = pongs;
            this.size = size;
            this.message = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(size, 8)));
        }

        @Override
        public void roundTrip() throws IOException {
            if (size >= 8) {
                message.putLong(0, ++sequence);
            }
            while (pings.offer(message, 0, size) < 0) {
                if (pings.isClosed()) {
                    throw new IOException("the ping publication closed");
                }
                Thread.onSpinWait();
            }
            received = -1;
            while (received < 0) {
                if (pongs.poll(this, 1) == 0) {
                    Thread.onSpinWait();
                }
            }
        }

        @Override
        public void onFragment(DirectBuffer buffer, int offset, int length, Header header) {
            received = length;
            echoed = length >= 8 ? buffer.getLong(offset) : sequence;
        }

        @Override
        public void checkLast() throws IOException {
            if (received != size || echoed != sequence) {
                throw new IOException("the pong brought back " + received + " bytes (sequence " + echoed
                        + "), expected " + size + " (sequence " + sequence + ")");
            }
        }
    }
}
