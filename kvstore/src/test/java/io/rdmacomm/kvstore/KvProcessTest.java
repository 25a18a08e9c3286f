package io.rdmacomm.kvstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.kvstore.cli.KvClientMain;
import io.rdmacomm.kvstore.cli.KvServerMain;
import io.rdmacomm.testkit.ChildJvm;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A real kv-server process, on one transport (subclasses), with clients in this JVM and in child JVMs: the same
 * checks as the in-process tests, across processes. One server serves the class's tests (each uses keys of its
 * own and compares figures before and after), and is stopped with SIGTERM at the end, which must exit 0.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class KvProcessTest {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final String dataEndpoint;
    private final List<AutoCloseable> open = new ArrayList<>();
    private Process server;
    private Lines serverOut;
    private String address;

    protected KvProcessTest(String dataEndpoint) {
        this.dataEndpoint = dataEndpoint;
    }

    @BeforeAll
    void startServer() throws Exception {
        Endpoint e = Endpoint.parse(dataEndpoint);
        var cause = Communicators.provider(e.scheme()).unavailabilityCause(e);
        assumeTrue(cause.isEmpty(), () -> "transport unavailable: " + cause.orElse(""));
        server = ChildJvm.of(KvServerMain.class, List.of("--listen", "127.0.0.1:0", "--data-endpoint",
                dataEndpoint, "--memory", "64m", "--max-value", "8m")).redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        serverOut = new Lines(server);
        String line = serverOut.next(START_TIMEOUT);
        assertTrue(line.matches("listening 127\\.0\\.0\\.1:\\d+ data " + e.scheme() + "://127\\.0\\.0\\.1:\\d+.*"),
                "kv-server's first line: " + line);
        address = line.split(" ")[1];
    }

    @AfterEach
    void closeClients() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        open.clear();
    }

    @AfterAll
    void sigtermStopsTheServerCleanly() throws Exception {
        if (server == null) {
            return;
        }
        try {
            server.destroy();
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "kv-server stopped on SIGTERM");
            assertEquals(0, server.exitValue(), "kv-server's exit status after SIGTERM");
            assertEquals(List.of(), serverOut.rest(START_TIMEOUT), "nothing on stdout after the listening line");
        } finally {
            server.destroyForcibly();
        }
    }

    private KvClient client(String name, long buffer) throws IOException {
        KvClient c = KvClient.connect(address, KvClient.Options.defaults().withBuffer(buffer).withName(name));
        open.add(c);
        return c;
    }

    private KvStats stats() throws IOException {
        try (KvControlClient control = KvControlClient.connect(address, Duration.ofSeconds(10))) {
            return control.stats();
        }
    }

    @Test
    void putGetDeleteAndTypedErrorsAcrossProcesses() throws Exception {
        KvClient kv = client("basic", 16 << 20);
        byte[] big = Workloads.value(1, 1, 5 << 20).array();
        kv.put("big".getBytes(StandardCharsets.US_ASCII), big);
        ByteBuffer got = kv.get("big".getBytes(StandardCharsets.US_ASCII));
        byte[] back = new byte[got.remaining()];
        got.get(back);
        assertArrayEquals(big, back);
        assertEquals(KvException.Code.VALUE_TOO_LARGE, org.junit.jupiter.api.Assertions.assertThrows(
                KvException.class, () -> kv.put("x".getBytes(StandardCharsets.US_ASCII), new byte[9 << 20])).code());
        assertEquals(KvException.Code.NOT_FOUND, org.junit.jupiter.api.Assertions.assertThrows(KvException.class,
                () -> kv.get("nope".getBytes(StandardCharsets.US_ASCII))).code());
        long used = stats().usedBytes();
        assertTrue(kv.delete("big".getBytes(StandardCharsets.US_ASCII)));
        assertEquals(used - (5 << 20) - Allocator.HEADER, stats().usedBytes(), "the deleted value's block is free");
    }

    @Test
    void concurrentOverwritesNeverTearAGet() throws Exception {
        long errorsBefore = stats().errors();
        Workloads.Counts c = Workloads.concurrentOverwrites(name -> client(name, 256 * 1024), 3, 3, 12, 600, 16,
                64 * 1024);
        assertEquals(1800, c.gets());
        assertTrue(c.checked() > 100, "ordering checked on owned keys: " + c.checked());
        assertEquals(errorsBefore, stats().errors());
    }

    @Test
    void aClientKilledMidOperationLeavesTheOthersServedAndLeaksNothing() throws Exception {
        KvClient other = client("survivor", 1 << 20);
        other.put("mine".getBytes(StandardCharsets.US_ASCII), Workloads.value(1, 1, 100_000));
        KvStats before = stats();
        Process churn = ChildJvm.of(ChurnClient.class, List.of(address, Integer.toString(4 << 20)))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            assertEquals("running", new Lines(churn).next(START_TIMEOUT));
            // the churn client moves 4 MiB values back and forth without pause: kill -9 lands mid-operation
            for (int i = 0; i < 20; i++) {
                Workloads.check(other.get("mine".getBytes(StandardCharsets.US_ASCII)), "survivor GET");
            }
        } finally {
            churn.destroyForcibly();
            assertTrue(churn.waitFor(30, TimeUnit.SECONDS), "the killed client is gone");
        }
        awaitSessions(before.sessions());
        Workloads.check(other.get("mine".getBytes(StandardCharsets.US_ASCII)), "survivor GET after the kill");
        try (KvControlClient control = KvControlClient.connect(address, Duration.ofSeconds(10))) {
            for (int k = 0; k < 4; k++) {
                try {
                    control.delete(("churn-" + k).getBytes(StandardCharsets.US_ASCII));
                } catch (KvException e) {
                    assertEquals(KvException.Code.NOT_FOUND, e.code());
                }
            }
        }
        KvStats after = stats();
        assertEquals(before.usedBytes(), after.usedBytes(), "pool usage back to what it was before the kill");
        assertEquals(before.keys(), after.keys());
    }

    @Test
    @Timeout(300) // five kv-client JVMs, each starting its transport: slow on a loaded machine
    void theCommandLineClientPutsGetsDeletesAndReports() throws Exception {
        byte[] value = Workloads.value(5, 5, 300_000).array();
        client("cli", 1 << 20).put("blob".getBytes(StandardCharsets.US_ASCII), value);
        Run get = kvClient("get", "blob");
        assertEquals(0, get.status(), "get's exit status; stderr: " + get.err());
        assertArrayEquals(value, get.out(), "get's stdout is the value and nothing else");
        assertEquals("", get.err());

        assertEquals(new Run(0, new byte[0], ""), kvClient("put", "cli-key", "cli value"));
        assertArrayEquals("cli value".getBytes(StandardCharsets.US_ASCII), client("cli check", 4096).control()
                .get("cli-key".getBytes(StandardCharsets.US_ASCII)), "what kv-client put is stored");
        Run stats = kvClient("stats");
        assertEquals(0, stats.status(), stats.err());
        assertTrue(stats.text().startsWith("data_endpoint: " + dataEndpoint.substring(0, 4)), stats.text());
        assertTrue(stats.text().contains("\nkeys: "), stats.text());
        assertEquals(new Run(0, new byte[0], ""), kvClient("delete", "cli-key"));
        Run missing = kvClient("get", "cli-key");
        assertEquals(1, missing.status());
        assertEquals(0, missing.out().length);
        assertEquals("kv-client: no such key 'cli-key'\n", missing.err(), "one line on stderr");
    }

    /** What a kv-client process printed and returned. */
    private record Run(int status, byte[] out, String err) {
        String text() {
            return new String(out, StandardCharsets.UTF_8);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Run r && r.status == status && Arrays.equals(r.out, out) && r.err.equals(err);
        }

        @Override
        public int hashCode() {
            return status;
        }

        @Override
        public String toString() {
            return "exit " + status + ", stdout '" + text() + "', stderr '" + err + "'";
        }
    }

    /** kv-client in a process of its own against this class's server. */
    private Run kvClient(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--server", address, "--buffer", "1m"));
        all.addAll(List.of(args));
        Path out = Files.createTempFile("kv-client", ".out");
        Path err = Files.createTempFile("kv-client", ".err");
        try {
            Process p = ChildJvm.of(KvClientMain.class, all).redirectOutput(out.toFile()).redirectError(err.toFile())
                    .start();
            try {
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kv-client " + String.join(" ", args) + " finished");
            } finally {
                p.destroyForcibly();
            }
            // without the notice rdma:// gives once per process where it runs on ucx-jucx by default (JDK 17-21)
            return new Run(p.exitValue(), Files.readAllBytes(out), ChildJvm.withoutJucxNotice(Files.readString(err)));
        } finally {
            Files.delete(out);
            Files.delete(err);
        }
    }

    /** Polls the server's session count (across processes there is nothing to wait on), with a deadline. */
    private void awaitSessions(int expected) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (stats().sessions() != expected && System.nanoTime() < deadline) {
            Thread.onSpinWait(); // each round is a gRPC call, which waits on the network anyway
        }
        assertEquals(expected, stats().sessions(), "open sessions after the killed client's ended");
    }
}
