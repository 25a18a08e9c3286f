package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.servercomm.ServerMain;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionException;
import io.rdmacomm.session.SessionRequest;
import io.rdmacomm.session.SessionStatus;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * servercomm in a JVM of its own whose descriptor limit is lowered ({@code ulimit -n}, for that process only):
 * it says at start how many sessions it holds, refuses the one past them as busy with a clear message, and
 * survives a flood of more silent connections than it has descriptors, serving a real client within 5 s after.
 */
@Timeout(180)
class ServerLimitsEndToEndTest {
    /** The server's descriptor limit: small enough that the flood below exceeds it several times. */
    private static final int LIMIT = 256;
    private static final int FLOOD = 900;
    private static final Pattern SESSIONS = Pattern.compile("descriptors: limit (\\d+), \\d+ in use,"
            + " (?:\\d+ kept for connections in setup, )?(\\d+) per connection(?: and \\d+ per peer process)?:"
            + " (\\d+) sessions \\(reduced from 10000");

    @TempDir
    Path dir;

    private Process server;

    @AfterEach
    void stop() throws Exception {
        if (server != null && server.isAlive()) {
            server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private String start(String endpoint) throws Exception {
        ProcessBuilder pb = Jvms.java(ServerMain.class, List.of("--endpoint", endpoint));
        List<String> command = new ArrayList<>(List.of("bash", "-c", "ulimit -n " + LIMIT + " && exec \"$@\"",
                "bash"));
        command.addAll(pb.command());
        server = pb.command(command).redirectError(dir.resolve("server.err").toFile()).start();
        return Jvms.awaitListening(server);
    }

    private static void assertBusy(org.junit.jupiter.api.function.Executable open, int sessions) {
        SessionException busy = assertThrows(SessionException.class, open);
        assertEquals(SessionStatus.BUSY, busy.status());
        assertTrue(busy.getMessage().contains("limit of " + sessions + " sessions"), busy.getMessage());
    }

    private List<String> serverLog() throws IOException {
        return Files.readAllLines(dir.resolve("server.err"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void printsTheSessionsItsDescriptorLimitHoldsAndRefusesTheNextOneAsBusy(String scheme) throws Exception {
        Jvms.assumeAvailable(scheme);
        String endpoint = start(scheme + "://127.0.0.1:0");
        List<String> log = serverLog();
        String line = log.stream().filter(l -> l.startsWith("servercomm: descriptors:")).findFirst()
                .orElseThrow(() -> new AssertionError("servercomm printed no descriptor line: " + log));
        Matcher m = SESSIONS.matcher(line);
        assertTrue(m.find(), line);
        assertEquals(LIMIT, Integer.parseInt(m.group(1)), line);
        int sessions = Integer.parseInt(m.group(3));
        assertTrue(sessions >= 1 && sessions * Integer.parseInt(m.group(2)) < LIMIT, line);

        List<Communicator> held = new ArrayList<>();
        try {
            for (int i = 0; i < sessions; i++) {
                held.add(echoSession(endpoint));
            }
            try (Communicator extra = Communicators.connect(endpoint)) {
                assertBusy(() -> SessionClient.open(extra, SessionRequest.echo()), sessions);
            }
            // the same with the request sent as the client's first bytes (on tcp://, with the handshake)
            try (Communicator early = Communicators.open(endpoint)) {
                assertBusy(() -> SessionClient.connect(early, SessionRequest.echo()), sessions);
            }
            for (Communicator c : held) {
                echo(c);
            }
        } finally {
            for (Communicator c : held) {
                c.close();
            }
        }
        assertTrue(server.isAlive(), "servercomm exited");
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void aFloodOfSilentConnectionsBeyondTheDescriptorLimitLeavesTheServerServing(String scheme) throws Exception {
        Jvms.assumeAvailable(scheme);
        String endpoint = start(scheme + "://127.0.0.1:0");
        URI uri = URI.create(endpoint);
        List<SocketChannel> flood = new ArrayList<>();
        int opened = 0;
        try {
            for (int i = 0; i < FLOOD; i++) {
                SocketChannel s = SocketChannel.open();
                flood.add(s);
                s.configureBlocking(false);
                s.connect(new InetSocketAddress("127.0.0.1", uri.getPort()));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            for (SocketChannel s : flood) {
                while (s.isConnectionPending() && System.nanoTime() - deadline < 0) {
                    try {
                        if (s.finishConnect()) {
                            break;
                        }
                    } catch (IOException refused) {
                        break;
                    }
                    Thread.onSpinWait();
                }
                opened += s.isConnected() ? 1 : 0;
            }
            assertTrue(opened > LIMIT, "only " + opened + " of " + FLOOD + " flood connections were taken");
        } finally {
            for (SocketChannel s : flood) {
                s.close();
            }
        }
        long start = System.nanoTime();
        try (Communicator c = Communicators.connect(endpoint + (endpoint.contains("?") ? "&" : "?")
                + "connectTimeout=5s")) {
            SessionClient.open(c, SessionRequest.echo());
            echo(c);
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertTrue(seconds < 5, "served a client " + seconds + " s after the flood");
        assertTrue(server.isAlive(), "servercomm exited");
        long warnings = serverLog().stream().filter(l -> l.contains("WARN")).count();
        assertTrue(warnings < 100, warnings + " WARN lines for a flood of " + FLOOD + ": not rate-limited");
        if (!serverLog().stream().noneMatch(l -> l.contains("no further"))) {
            fail("an accept thread gave up: " + serverLog());
        }
    }

    private static Communicator echoSession(String endpoint) throws IOException {
        Communicator c = Communicators.connect(endpoint);
        try {
            SessionClient.open(c, SessionRequest.echo());
            return c;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private static void echo(Communicator c) throws IOException {
        ByteBuffer out = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < 64; i++) {
            out.put(i, (byte) i);
        }
        c.write(out);
        c.sync();
        ByteBuffer in = ByteBuffer.allocateDirect(64);
        c.readFully(in);
        assertEquals(out.flip(), in.flip());
    }
}
