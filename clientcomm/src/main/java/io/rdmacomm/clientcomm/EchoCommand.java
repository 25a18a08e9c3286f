package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.session.SessionRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code echo}: N messages of random bytes through an ECHO session, every byte checked. A writer thread sends
 * while this thread reads and verifies, so messages larger than the socket buffers cannot deadlock. Each message
 * is generated from its own seed in fixed chunks, and the reader regenerates it the same way: memory stays at
 * two chunks whatever the size.
 */
@Command(name = "echo", sortOptions = false,
        description = "Sends N messages of SIZE random bytes to servercomm's echo, verifies every byte that comes"
                + " back and prints one summary line: messages, bytes, seconds, MB/s (10^6 bytes each way).")
final class EchoCommand implements Callable<Integer> {
    static final int CHUNK = 64 * 1024;
    private static final long WRITER_STOP_SECONDS = 10;

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-s", "--size"}, paramLabel = "SIZE", defaultValue = "64k", converter = Cli.SizeConverter.class,
            description = "bytes per message: digits with an optional k, m or g (default: ${DEFAULT-VALUE})")
    private long size;

    @Option(names = {"-n", "--count"}, paramLabel = "N", defaultValue = "100",
            description = "number of messages (default: ${DEFAULT-VALUE})")
    private long count;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        if (size < 1) {
            throw new ParameterException(spec.commandLine(), "--size must be at least 1 byte, got " + size);
        }
        if (count < 1) {
            throw new ParameterException(spec.commandLine(), "--count must be at least 1, got " + count);
        }
        long seed = ThreadLocalRandom.current().nextLong();
        ExecutorService writerThread = Executors.newSingleThreadExecutor(r -> new Thread(r, "clientcomm-echo-writer"));
        try (Communicator peer = client.openSession(SessionRequest.echo())) {
            long start = System.nanoTime();
            Future<?> writer = writerThread.submit(() -> {
                write(peer, seed);
                return null;
            });
            try {
                verify(peer, seed);
            } catch (IOException | RuntimeException e) {
                abort(peer, e);
                throw writerFailure(writer).orElse(e);
            }
            writer.get(WRITER_STOP_SECONDS, TimeUnit.SECONDS);
            double seconds = (System.nanoTime() - start) / 1e9;
            long bytes = Math.multiplyExact(size, count);
            PrintWriter out = spec.commandLine().getOut();
            double mbs = bytes / seconds / 1e6;
            out.printf(Locale.ROOT, "echo: %d messages of %d bytes, %d bytes each way in %.3f s, " + (mbs < 10 ? "%.3f"
                    : "%.1f") + " MB/s, all verified%n", count, size, bytes, seconds, mbs);
            out.flush();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            writerThread.shutdownNow();
        }
        return 0;
    }

    /** The writer's own failure, if it failed first: it explains a reader that was merely cut off. */
    private static Optional<Exception> writerFailure(Future<?> writer) {
        try {
            writer.get(WRITER_STOP_SECONDS, TimeUnit.SECONDS);
            return Optional.empty();
        } catch (ExecutionException e) {
            return e.getCause() instanceof IOException io && !(io instanceof ClosedChannelException)
                    ? Optional.of(io) : Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (TimeoutException e) {
            return Optional.empty();
        }
    }

    /** Closes the session so a writer blocked on it gives up. */
    private static void abort(Communicator peer, Exception cause) {
        try {
            peer.close();
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    /**
     * The chunk the messages are generated in: no larger than a message, since generating fills the whole chunk
     * (64 KiB of random bytes per 8-byte message took longer than its round trip on rdma://).
     */
    private byte[] chunk() {
        return new byte[(int) Math.min(CHUNK, size)];
    }

    private void write(Communicator peer, long seed) throws IOException {
        byte[] chunk = chunk();
        ByteBuffer buffer = ByteBuffer.wrap(chunk);
        for (long m = 0; m < count; m++) {
            SplittableRandom random = messageRandom(seed, m);
            for (long done = 0; done < size; ) {
                int n = (int) Math.min(CHUNK, size - done);
                random.nextBytes(chunk);
                buffer.clear().limit(n);
                peer.write(buffer);
                done += n;
            }
            peer.sync();
        }
    }

    private void verify(Communicator peer, long seed) throws IOException {
        byte[] expected = chunk();
        byte[] actual = chunk();
        ByteBuffer buffer = ByteBuffer.wrap(actual);
        for (long m = 0; m < count; m++) {
            SplittableRandom random = messageRandom(seed, m);
            for (long done = 0; done < size; ) {
                int n = (int) Math.min(CHUNK, size - done);
                random.nextBytes(expected);
                buffer.clear().limit(n);
                peer.readFully(buffer);
                int at = Arrays.mismatch(expected, 0, n, actual, 0, n);
                if (at >= 0) {
                    throw new CommunicatorException(String.format(Locale.ROOT, "echo verification failed: message"
                            + " %d of %d, byte %d: sent 0x%02x, got 0x%02x back from %s", m + 1, count, done + at,
                            expected[at], actual[at], peer.peerName()));
                }
                done += n;
            }
        }
    }

    private static SplittableRandom messageRandom(long seed, long message) {
        return new SplittableRandom(seed + message * 0x9E3779B97F4A7C15L);
    }
}
