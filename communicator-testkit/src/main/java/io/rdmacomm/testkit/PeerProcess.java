package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The peer process of the peer death and silence tests ({@link PeerDeathMain} in a second JVM), its stdout lines
 * (its signals to the test), the signals the test sends it, and the blocked calls the surviving side makes.
 */
final class PeerProcess implements AutoCloseable {
    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private PeerProcess(Process process) {
        this.process = process;
    }

    /** Starts a peer in {@code mode} ({@link PeerDeathMain}) that connects to {@code server}. */
    static PeerProcess start(String mode, Communicator server) throws IOException {
        ProcessBuilder pb = ChildJvm.of(PeerDeathMain.class, List.of(mode, server.endpoint().toString()));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        PeerProcess peer = new PeerProcess(pb.start());
        Thread pump = new Thread(peer::pumpOutput, "peer-stdout");
        pump.setDaemon(true);
        pump.start();
        return peer;
    }

    private void pumpOutput() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null;) {
                lines.add(line);
            }
        } catch (IOException e) {
            lines.add("EOF " + e);
        }
    }

    /** Waits (30 s at most) until the peer printed {@code what}. */
    void expect(String what) throws InterruptedException {
        while (true) {
            String line = lines.poll(30, TimeUnit.SECONDS);
            assertTrue(line != null, "the peer process did not print " + what + " within 30 s");
            if (line.equals(what)) {
                return;
            }
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
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
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
