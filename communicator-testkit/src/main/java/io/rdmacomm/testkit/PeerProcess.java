package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The peer process of the peer death and silence tests ({@link PeerDeathMain} in a second JVM), its
 * {@link PeerSignals}, the signals the test sends it, and the blocked calls the surviving side makes.
 */
final class PeerProcess implements AutoCloseable {
    private final Process process;
    private final PeerSignals signals;

    private PeerProcess(Process process, PeerSignals signals) {
        this.process = process;
        this.signals = signals;
    }

    /** Starts a peer in {@code mode} ({@link PeerDeathMain}) that connects to {@code server}. */
    static PeerProcess start(String mode, Communicator server) throws IOException {
        ProcessBuilder pb = ChildJvm.of(PeerDeathMain.class, List.of(mode, server.endpoint().toString()));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        PeerSignals signals = PeerSignals.listen();
        try {
            return new PeerProcess(signals.start(pb), signals);
        } catch (IOException | RuntimeException e) {
            signals.close();
            throw e;
        }
    }

    /** Waits (30 s at most) until the peer signalled {@code what}. */
    void expect(String what) throws IOException {
        try {
            String line;
            do {
                line = signals.next(30);
                assertTrue(line != null, "the peer process ended before it signalled " + what);
            } while (!line.equals(what));
        } catch (TimeoutException e) {
            throw new AssertionError("the peer process did not signal " + what + " within 30 s", e);
        }
    }

    void kill() {
        process.destroyForcibly();
    }

    /** Sends {@code signal} (STOP, CONT) to the peer process. */
    void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " failed");
    }

    /** Kills the peer (a stopped one too) and reaps it. */
    @Override
    public void close() throws InterruptedException, IOException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
        signals.close();
    }

    /** Reads on {@code c} until a read fails; a clean end of stream is an error. */
    static CompletableFuture<Long> readUntilFailure(Communicator c, String peerState) {
        return CompletableFuture.supplyAsync(() -> {
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            long total = 0;
            try {
                while (true) {
                    int n = c.read(b.clear());
                    if (n < 0) {
                        throw new AssertionError("clean end of stream from a " + peerState + " peer after " + total);
                    }
                    total += n;
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
    }

    /** Writes and syncs on {@code c} until a call fails. */
    static CompletableFuture<Void> writeUntilFailure(Communicator c) {
        return CompletableFuture.runAsync(() -> {
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            try {
                while (true) {
                    c.write(b.clear());
                    c.sync();
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
    }
}
