package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.clientcomm.ClientMain;
import io.rdmacomm.servercomm.ServerMain;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A stopped process (SIGSTOP) on either side of a servercomm session, with {@code liveness=2s} on both endpoints:
 * the server ends a stopped client's session and serves the next client in its slot, and clientcomm fails with a
 * message naming the silence when the server stops.
 */
@Timeout(120)
class LivenessEndToEndTest {
    /** Generous: the silence is noticed after the liveness and one check period. */
    private static final long DETECT_SECONDS = 20;

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private final LinkedBlockingQueue<String> serverLog = new LinkedBlockingQueue<>();
    /** Every line servercomm wrote to stderr, for a failure's message (serverLog's are taken as they are awaited). */
    private final List<String> serverLines = Collections.synchronizedList(new ArrayList<>());

    @AfterEach
    void killAll() throws InterruptedException {
        for (Process p : processes) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts servercomm with one session slot, logging every session; returns the endpoint it listens on. */
    private String startServer(String scheme) throws Exception {
        Jvms.assumeAvailable(scheme);
        Process server = Jvms.java(ServerMain.class, List.of("--endpoint", scheme + "://127.0.0.1:0?liveness=2s",
                "--max-sessions", "1", "--verbose")).start();
        processes.add(server);
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(server.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    serverLog.add(line);
                    serverLines.add(line);
                }
            } catch (IOException e) {
                serverLog.add("EOF " + e);
            }
        }, "servercomm-stderr");
        pump.setDaemon(true);
        pump.start();
        return Jvms.awaitListening(server);
    }

    /** The last lines servercomm wrote to stderr. */
    private String serverLogTail() {
        synchronized (serverLines) {
            return String.join("\n", serverLines.subList(Math.max(0, serverLines.size() - 40), serverLines.size()));
        }
    }

    /** Waits until servercomm logs a line containing every one of {@code parts}; returns it. */
    private String awaitServerLog(long seconds, String... parts) throws InterruptedException {
        String line = nextServerLog(seconds, parts);
        assertTrue(line != null, "servercomm logged no line with " + List.of(parts) + " within " + seconds + " s");
        return line;
    }

    /** The next line of servercomm's containing every one of {@code parts}, or null if none came within the time. */
    private String nextServerLog(long seconds, String... parts) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            String line = serverLog.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null || List.of(parts).stream().allMatch(line::contains)) {
                return line;
            }
        }
    }

    /** A clientcomm echo that runs far longer than the test, once the server logged its session. */
    private Process startEchoSession(String endpoint) throws IOException, InterruptedException {
        Process client = Jvms.java(ClientMain.class, List.of("--endpoint", endpoint, "echo", "--size", "64k",
                "--count", "100000000")).redirectOutput(dir.resolve("echo.out").toFile())
                .redirectError(dir.resolve("echo.err").toFile()).start();
        processes.add(client);
        awaitServerLog(60, "session from", "ECHO");
        return client;
    }

    private static void signal(Process p, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " failed");
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void theServerEndsAStoppedClientsSessionAndServesTheNextClient(String scheme) throws Exception {
        String endpoint = startServer(scheme);
        Process echo = startEchoSession(endpoint);
        signal(echo, "STOP");
        String ended = awaitServerLog(DETECT_SECONDS, "failed", "(liveness)");
        assertTrue(ended.contains("sent nothing for 2s"), ended);
        Jvms.Result hello = Jvms.client(dir, "--endpoint", endpoint, "hello", "--message", "next");
        if (hello.code() != 0) {
            // the server gives up on a handshake a little after the client did (its limit starts at its accept):
            // wait for that line, if it comes, so that the message below shows the server's side too
            nextServerLog(5, "dropped");
        }
        assertEquals(0, hello.code(), () -> "the only session slot is free again: " + hello + "\nservercomm's log:\n"
                + serverLogTail());
        assertEquals(List.of("next"), hello.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void clientcommFailsNamingTheSilenceWhenTheServerStops(String scheme) throws Exception {
        String endpoint = startServer(scheme);
        Process echo = startEchoSession(endpoint);
        signal(processes.get(0), "STOP");
        assertTrue(echo.waitFor(DETECT_SECONDS, TimeUnit.SECONDS), "clientcomm still runs "
                + DETECT_SECONDS + " s after the server stopped");
        String err = Files.readString(dir.resolve("echo.err"));
        assertNotEquals(0, echo.exitValue(), err);
        assertTrue(err.contains("sent nothing for 2s (liveness)"), err);
    }
}
