package io.rdmacomm.kvstore.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.kvstore.KvServer;
import io.rdmacomm.kvstore.KvServerConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** kv-client and kv-server's command lines, in process, against a server whose data plane is local://. */
@Timeout(60)
class KvCliTest {
    private static KvServer server;

    /** What a run printed and returned. */
    private record Run(int status, byte[] out, String err) {
        String text() {
            return new String(out, StandardCharsets.UTF_8);
        }
    }

    @BeforeAll
    static void start() throws Exception {
        server = KvServer.start(KvServerConfig.of("127.0.0.1", 0, Endpoint.parse("local://kv-cli-test"))
                .withMemory(16 << 20, 4 << 20));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static Run client(String... args) {
        List<String> all = new ArrayList<>(List.of("--server", server.controlAddress(), "--buffer", "4m"));
        all.addAll(List.of(args));
        return run(all.toArray(String[]::new));
    }

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = KvClientMain.execute(args, new PrintStream(out, true), new PrintStream(err, true));
        return new Run(status, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void putGetDeleteWithExitCodesAndExactOutput(@TempDir Path dir) throws Exception {
        Run put = client("put", "greeting", "hello, world");
        assertEquals(0, put.status(), put.err());
        assertEquals(0, put.out().length);
        Run get = client("get", "greeting");
        assertEquals(0, get.status(), get.err());
        assertEquals("hello, world", get.text(), "the value and nothing else: no newline");

        byte[] binary = new byte[256 * 1024];
        for (int i = 0; i < binary.length; i++) {
            binary[i] = (byte) (i * 7);
        }
        Path file = Files.write(dir.resolve("v.bin"), binary);
        assertEquals(0, client("put", "bin", "--file", file.toString()).status());
        assertArrayEquals(binary, client("get", "bin").out());

        Run missing = client("get", "nope");
        assertEquals(1, missing.status());
        assertEquals(0, missing.out().length);
        assertEquals("kv-client: no such key 'nope'\n", missing.err(), "one line on stderr");

        assertEquals(0, client("delete", "greeting").status());
        Run again = client("delete", "greeting");
        assertEquals(1, again.status());
        assertEquals("kv-client: no such key 'greeting'\n", again.err());
    }

    @Test
    void refusalsExitOneWithOneLineNamingTheLimit(@TempDir Path dir) throws Exception {
        Path overMax = Files.write(dir.resolve("over"), new byte[(4 << 20) + 1]);
        assertRefused(run("--server", server.controlAddress(), "--buffer", "8m", "put", "big", "--file",
                overMax.toString()), "kv-client: value of 4194305 bytes exceeds the server's max value (--max-value)");
        assertRefused(client("get", "k".repeat(1025)), "kv-client: key of 1025 bytes: keys must have 1 to 1024 bytes"
                + " (the server's --max-key)");

        assertEquals(0, client("put", "wide", "--file", Files.write(dir.resolve("wide"), new byte[300_000]).toString())
                .status());
        Run small = run("--server", server.controlAddress(), "--buffer", "64k", "get", "wide");
        assertRefused(small, "kv-client: the value of 'wide' has 300000 bytes, more than the client's buffer of 64k"
                + " (--buffer)");
        assertEquals(0, client("delete", "wide").status());

        Path fourMiB = Files.write(dir.resolve("4m"), new byte[4 << 20]);
        int stored = 0;
        Run full;
        while ((full = client("put", "fill-" + stored, "--file", fourMiB.toString())).status() == 0) {
            stored++;
            assertTrue(stored < 4, "a 16 MiB pool holds fewer than four 4 MiB values");
        }
        assertRefused(full, "kv-client: the server's memory pool is full: no room for a value of 4194304 bytes");
        for (int i = 0; i < stored; i++) {
            assertEquals(0, client("delete", "fill-" + i).status());
        }
        assertEquals(0, client("put", "fill-again", "--file", fourMiB.toString()).status(), "deleting made room");
        assertEquals(0, client("delete", "fill-again").status());
    }

    private static void assertRefused(Run r, String line) {
        assertEquals(1, r.status(), r.err());
        assertEquals(0, r.out().length, "nothing on stdout");
        assertEquals(line + "\n", r.err(), "one line on stderr");
    }

    @Test
    void usageErrorsExitTwoAndNameTheProblem() {
        Run both = client("put", "k", "v", "--file", "f");
        assertEquals(2, both.status());
        assertTrue(both.err().startsWith("kv-client: put takes either VALUE or --file F"), both.err());
        Run badSize = run("--buffer", "lots", "stats");
        assertEquals(2, badSize.status());
        assertTrue(badSize.err().contains("lots"), badSize.err());
        Run noSub = run();
        assertEquals(2, noSub.status());
        assertTrue(noSub.err().contains("missing subcommand"), noSub.err());
        Run tooLarge = client("bench", "--value-size", "8m");
        assertEquals(2, tooLarge.status());
        assertTrue(tooLarge.err().contains("--value-size"), tooLarge.err());
    }

    @Test
    void aServerThatIsNotThereIsOneLineAndExitOne() {
        Run r = run("--server", "127.0.0.1:1", "--timeout", "5s", "get", "k");
        assertEquals(1, r.status());
        assertTrue(r.err().startsWith("kv-client: cannot reach the kv server at 127.0.0.1:1"), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @Test
    void statsAndHelp() throws Exception {
        client("put", "s", "x");
        Run stats = client("stats");
        assertEquals(0, stats.status(), stats.err());
        assertTrue(stats.text().contains("data_endpoint: local://kv-cli-test\n"), stats.text());
        assertTrue(stats.text().contains("pool_bytes: " + (16 << 20) + "\n"), stats.text());
        JsonNode json = new ObjectMapper().readTree(client("stats", "--json").out());
        assertEquals(16 << 20, json.get("pool_bytes").asLong());

        Run help = run("--help");
        assertEquals(0, help.status());
        for (String sub : List.of("put", "get", "delete", "stats", "bench")) {
            assertTrue(help.text().contains(sub), sub + " in " + help.text());
        }
        ByteArrayOutputStream serverHelp = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        System.setOut(new PrintStream(serverHelp, true));
        try {
            assertEquals(0, KvServerMain.execute(new String[] {"--help"}));
        } finally {
            System.setOut(saved);
        }
        assertTrue(serverHelp.toString(StandardCharsets.UTF_8).contains("--data-endpoint=URI"), serverHelp.toString());
    }

    @Test
    void kvServerRefusesBadOptionsAsUsageErrors() {
        assertEquals(2, KvServerMain.execute(new String[] {"--memory", "1k"}));
        assertEquals(2, KvServerMain.execute(new String[] {"--listen", "no-port"}));
        assertEquals(2, KvServerMain.execute(new String[] {"--max-value", "2g", "--memory", "64m"}));
        assertEquals(2, KvServerMain.execute(new String[] {"--loops", "-1", "--memory", "64m"}));
        assertEquals(2, KvServerMain.execute(new String[] {"--loops", "65", "--memory", "64m"}));
        assertEquals(2, KvServerMain.execute(new String[] {"--loop-spin", "-5us", "--memory", "64m"}));
    }

    @Test
    void benchPrintsOneJsonObjectOnEitherPath() throws Exception {
        for (String path : List.of("data", "control")) {
            Run r = client("bench", "--ops", "400", "--warmup", "100", "--clients", "2", "--value-size", "1k",
                    "--keys", "20", "--get-ratio", "0.5", "--path", path, "--json");
            assertEquals(0, r.status(), r.err());
            JsonNode json = new ObjectMapper().readTree(r.out());
            assertEquals(path, json.get("path").asText());
            assertEquals(400, json.get("ops").asLong());
            assertEquals(400, json.get("gets").asLong() + json.get("puts").asLong());
            assertTrue(json.get("gets").asLong() > 100 && json.get("puts").asLong() > 100, r.text());
            assertEquals(2, json.get("clients").asInt());
            assertEquals(1024, json.get("value_size").asLong());
            assertTrue(json.get("ops_per_sec").asDouble() > 0);
            assertTrue(json.get("p99_us").asDouble() >= json.get("p50_us").asDouble());
            assertEquals("local://kv-cli-test", json.get("data_endpoint").asText());
        }
    }

    @Test
    void benchDrivesSeveralClientsFromOneThread() throws Exception {
        Run r = client("bench", "--ops", "300", "--warmup", "30", "--clients", "3", "--threads", "1", "--value-size",
                "100", "--keys", "10", "--get-ratio", "0.5", "--json");
        assertEquals(0, r.status(), r.err());
        JsonNode json = new ObjectMapper().readTree(r.out());
        assertEquals(3, json.get("clients").asInt());
        assertEquals(1, json.get("threads").asInt());
        assertEquals(300, json.get("gets").asLong() + json.get("puts").asLong());
        Run tooMany = client("bench", "--clients", "2", "--threads", "3");
        assertEquals(2, tooMany.status());
        assertTrue(tooMany.err().contains("--threads must be 1 to --clients (2), got 3"), tooMany.err());
    }
}
