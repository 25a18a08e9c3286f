package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.servercomm.ServerMain;
import io.rdmacomm.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client JVM killed with SIGKILL in the middle of a one-sided WRITE, holding the server's region: servercomm's own
 * counters, asked with {@code clientcomm stats}, show the session and the registered memory while the client lives
 * and come back to their baseline after its death. The server's idle timeout is far longer than the test, so only
 * its noticing the dead peer can release them.
 */
@Timeout(240)
class RegisteredMemoryEndToEndTest {
    private static final long RELEASE_SECONDS = 60;

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void killAll() throws InterruptedException {
        for (Process p : processes) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** {@code clientcomm stats} against {@code endpoint}: its NAME=VALUE pairs. */
    private Map<String, Long> stats(String endpoint) throws Exception {
        Jvms.Result r = Jvms.client(dir, "--endpoint", endpoint, "stats");
        assertEquals(0, r.code(), r.toString());
        assertEquals(1, r.out().size(), r.toString());
        Map<String, Long> values = new LinkedHashMap<>();
        for (String pair : r.out().get(0).split(" ")) {
            String[] kv = pair.split("=", 2);
            values.put(kv[0], Long.parseLong(kv[1]));
        }
        return values;
    }

    private static List<Long> checked(Map<String, Long> stats) {
        return List.of(stats.get("sessions"), stats.get("regions"), stats.get("regionBytes"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void aClientKilledMidWriteLeavesNoSessionAndNoRegisteredMemoryBehind(String scheme) throws Exception {
        Jvms.assumeAvailable(scheme);
        Process server = Jvms.java(ServerMain.class, List.of("--endpoint", scheme + "://127.0.0.1:0",
                "--idle-timeout", "1h", "--region-size", "256k"))
                .redirectError(dir.resolve("server.err").toFile()).start();
        processes.add(server);
        String endpoint = Jvms.awaitListening(server);
        Map<String, Long> baseline = stats(endpoint);
        assertEquals(1, baseline.get("sessions"), "the stats session only: " + baseline);

        Process client = Jvms.java(HoldingWriteClient.class, List.of(endpoint))
                .redirectError(dir.resolve("client.err").toFile()).start();
        processes.add(client);
        BufferedReader out = new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
        String line = ChildJvm.readLine(out, 60);
        assertEquals(HoldingWriteClient.HOLDING, line, "the client did not get into its WRITE; see client.err");

        Map<String, Long> during = stats(endpoint);
        assertEquals(2, during.get("sessions"), "the held WRITE and the stats session: " + during);
        assertTrue(during.get("regions") >= baseline.get("regions") + 1, during + " against " + baseline);
        assertTrue(during.get("regionBytes") >= baseline.get("regionBytes") + 256 * 1024,
                during + " against " + baseline);

        client.destroyForcibly(); // SIGKILL
        assertTrue(client.waitFor(30, TimeUnit.SECONDS), "the killed client did not end");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RELEASE_SECONDS);
        Map<String, Long> after = stats(endpoint);
        while (!checked(after).equals(checked(baseline)) && System.nanoTime() < deadline) {
            after = stats(endpoint); // polling: each call is a clientcomm JVM, a second or more
        }
        assertEquals(checked(baseline), checked(after), "sessions, regions, regionBytes " + RELEASE_SECONDS
                + " s after the kill: " + after + "; baseline " + baseline);
        assertTrue(server.isAlive(), "servercomm died");
    }
}
