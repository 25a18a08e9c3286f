package io.rdmacomm.kvstore.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.kvstore.KvControlClient;
import io.rdmacomm.kvstore.KvServer;
import io.rdmacomm.kvstore.KvServerConfig;
import io.rdmacomm.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * kv-server with its gRPC control plane on rdma:// (UCX, shared memory between the processes) and on tcp:// (the
 * project's framed tcp://), through transport-netty's channels ({@code --listen URI}), and kv-client given that URI;
 * and the errors that name a control endpoint that is wrong or not served.
 */
@Timeout(120)
class KvControlEndpointTest {
    private static final long START_SECONDS = 60;

    /** What an in-process kv-client run printed and returned. */
    private record Run(int status, byte[] out, String err) {
        String text() {
            return new String(out, StandardCharsets.UTF_8);
        }
    }

    private static Run kvClient(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = KvClientMain.execute(args, new PrintStream(out, true), new PrintStream(err, true));
        return new Run(status, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }

    private static void assumeAvailable(String scheme) {
        Endpoint e = Endpoint.parse(scheme + "://127.0.0.1:0");
        var cause = Communicators.provider(scheme).unavailabilityCause(e);
        assumeTrue(cause.isEmpty(), () -> "transport unavailable: " + cause.orElse(""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"rdma", "tcp"})
    void aKvServerProcessServesItsControlPlaneOnTheUriAndKvClientUsesIt(String scheme) throws Exception {
        assumeAvailable(scheme);
        Process server = ChildJvm.of(KvServerMain.class, List.of("--listen", scheme + "://127.0.0.1:0",
                "--data-endpoint", scheme + "://127.0.0.1:0", "--memory", "16m", "--max-value", "4m"))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader lines = new BufferedReader(new InputStreamReader(server.getInputStream(),
                    StandardCharsets.UTF_8));
            String line = ChildJvm.readLine(lines, START_SECONDS);
            assertTrue(line != null && line.matches("listening " + scheme + "://127\\.0\\.0\\.1:\\d+ data " + scheme
                    + "://127\\.0\\.0\\.1:\\d+.*"), "kv-server's first line: " + line);
            String address = line.split(" ")[1];

            List<String> global = List.of("--server", address, "--buffer", "1m", "--timeout", "30s");
            assertEquals(0, run(global, "put", "greeting", "hello over " + scheme).status());
            Run get = run(global, "get", "greeting");
            assertEquals(0, get.status(), get.err());
            assertEquals("hello over " + scheme, get.text());
            Run stats = run(global, "stats", "--json");
            assertEquals(0, stats.status(), stats.err());
            JsonNode figures = new ObjectMapper().readTree(stats.text());
            assertEquals(1, figures.get("keys").asLong(), stats.text());
            assertTrue(figures.get("data_endpoint").asText().startsWith(scheme + "://"), stats.text());
            assertEquals(0, run(global, "delete", "greeting").status());
            Run missing = run(global, "get", "greeting");
            assertEquals(1, missing.status());
            assertEquals("kv-client: no such key 'greeting'\n", missing.err());

            // values inside the gRPC messages: the control plane alone, on the URI
            try (KvControlClient control = KvControlClient.connect(address, Duration.ofSeconds(30))) {
                byte[] value = new byte[300_000];
                for (int i = 0; i < value.length; i++) {
                    value[i] = (byte) (i * 31);
                }
                control.put("big".getBytes(StandardCharsets.US_ASCII), value);
                assertArrayEquals(value, control.get("big".getBytes(StandardCharsets.US_ASCII)));
                control.delete("big".getBytes(StandardCharsets.US_ASCII));
                assertEquals(0, control.stats().keys());
            }

            Run bench = run(global, "bench", "--path", "control", "--ops", "200", "--warmup", "50", "--keys", "10",
                    "--json");
            assertEquals(0, bench.status(), bench.err());
            JsonNode result = new ObjectMapper().readTree(bench.text());
            assertEquals("control", result.get("path").asText(), bench.text());
            assertEquals(200, result.get("ops").asLong(), bench.text());

            server.destroy();
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "kv-server stopped on SIGTERM");
            assertEquals(0, server.exitValue(), "kv-server's exit status after SIGTERM");
        } finally {
            server.destroyForcibly();
        }
    }

    private static Run run(List<String> global, String... args) {
        List<String> all = new ArrayList<>(global);
        all.addAll(List.of(args));
        return kvClient(all.toArray(String[]::new));
    }

    @Test
    void aControlEndpointOfAnotherSchemeIsRefusedNamingIt() {
        IllegalArgumentException config = assertThrows(IllegalArgumentException.class, () -> KvServerConfig.of(
                "127.0.0.1", 0, Endpoint.parse("tcp://127.0.0.1:0")).withControlEndpoint(
                Endpoint.parse("local://kv-control")));
        assertTrue(config.getMessage().contains("local://kv-control"), config.getMessage());

        StringWriter err = new StringWriter();
        CommandLine server = Cli.withErrorReporting(new CommandLine(new KvServerMain()), "kv-server", () -> false);
        server.setErr(new PrintWriter(err, true));
        assertEquals(2, server.execute("--listen", "local://kv-control", "--memory", "1m"));
        assertTrue(err.toString().startsWith("kv-server: --listen 'local://kv-control': control endpoint"
                + " local://kv-control: the gRPC control plane runs on HOST:PORT (TCP), rdma://HOST:PORT or"
                + " tcp://HOST:PORT, not on local://"), err.toString());

        Run client = kvClient("--server", "local://kv-control", "stats");
        assertEquals(2, client.status());
        assertTrue(client.err().startsWith("kv-client: bad server address 'local://kv-control': control endpoint"
                + " local://kv-control: "), client.err());
        Run garbled = kvClient("--server", "rdma://127.0.0.1:notaport", "stats");
        assertEquals(2, garbled.status());
        assertTrue(garbled.err().startsWith("kv-client: bad server address 'rdma://127.0.0.1:notaport'"),
                garbled.err());
    }

    @ParameterizedTest
    @ValueSource(strings = {"rdma", "tcp"})
    void aControlEndpointThatCannotBeBoundIsNamed(String scheme) throws Exception {
        assumeAvailable(scheme);
        int taken;
        try (KvServer first = KvServer.start(KvServerConfig.of("127.0.0.1", 0, Endpoint.parse("tcp://127.0.0.1:0"))
                .withMemory(1 << 20, 64 << 10).withControlEndpoint(Endpoint.parse(scheme + "://127.0.0.1:0")))) {
            taken = Integer.parseInt(first.controlAddress().substring(first.controlAddress().lastIndexOf(':') + 1));
            Endpoint busy = Endpoint.parse(scheme + "://127.0.0.1:" + taken);
            IOException e = assertThrows(IOException.class, () -> KvServer.start(KvServerConfig.of("127.0.0.1", 0,
                    Endpoint.parse("tcp://127.0.0.1:0")).withMemory(1 << 20, 64 << 10).withControlEndpoint(busy)));
            assertTrue(e.getMessage().startsWith("cannot serve the control plane on " + busy + ": "),
                    e.getMessage());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"rdma", "tcp"})
    void kvClientNamesAControlEndpointNobodyServes(String scheme) throws Exception {
        assumeAvailable(scheme);
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String address = scheme + "://127.0.0.1:" + port;
        Run stats = kvClient("--server", address, "--timeout", "20s", "stats");
        assertEquals(1, stats.status(), stats.err());
        assertTrue(stats.err().startsWith("kv-client: cannot reach the kv server at " + address + " (stats)"),
                stats.err());
        Run put = kvClient("--server", address, "--timeout", "20s", "put", "k", "v");
        assertEquals(1, put.status(), put.err());
        assertTrue(put.err().startsWith("kv-client: cannot reach the kv server at " + address), put.err());
    }
}
