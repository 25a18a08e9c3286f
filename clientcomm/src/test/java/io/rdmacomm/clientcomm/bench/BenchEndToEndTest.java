package io.rdmacomm.clientcomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.session.SessionServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bench commands against a real servercomm over real tcp:// sockets. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BenchEndToEndTest {
    private SessionServer server;
    private Thread serverThread;

    private String serve(String uri) throws Exception {
        server = SessionServer.start(Endpoint.parse(uri), 8, Duration.ofSeconds(10));
        serverThread = new Thread(() -> {
            try {
                server.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "bench-test-servercomm");
        serverThread.start();
        return server.endpoint().toString();
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.stop();
            assertTrue(server.awaitStopped(Duration.ofSeconds(20)), "servercomm did not stop");
            serverThread.join(TimeUnit.SECONDS.toMillis(20));
        }
    }

    private JsonNode runJson(String... args) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        var cl = BenchCommandTest.bench();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        assertEquals(0, cl.execute(args), err::toString);
        assertEquals("", err.toString(), "--json must suppress progress");
        assertEquals(1, out.toString().lines().count(), out::toString);
        return Json.MAPPER.readTree(out.toString());
    }

    @Test
    void latencyAgainstTheEchoSession() throws Exception {
        String endpoint = serve("tcp://127.0.0.1:0");
        JsonNode r = runJson("--endpoint", endpoint, "latency", "--size", "64", "--iterations", "2000",
                "--warmup", "500", "--json");
        assertEquals("tcp", r.get("transport").asText());
        assertEquals("latency", r.get("test").asText());
        assertEquals("blocking", r.get("mode").asText());
        assertEquals(64, r.get("size").asLong());
        assertEquals(2000, r.get("iterations").asLong());
        double p50 = r.get("p50_us").asDouble();
        assertTrue(p50 > 0 && p50 <= r.get("p99_us").asDouble() && r.get("p99_us").asDouble() <= r.get("max_us")
                .asDouble(), r::toString);
    }

    @Test
    void busyPollIsReportedAsTheMode() throws Exception {
        String endpoint = serve("tcp://127.0.0.1:0?busyPoll=1ms");
        JsonNode r = runJson("--endpoint", endpoint, "latency", "--iterations", "500", "--warmup", "100",
                "--json");
        assertEquals("busy-poll", r.get("mode").asText());
    }

    @Test
    void bandwidthIntoTheSinkSession() throws Exception {
        String endpoint = serve("tcp://127.0.0.1:0");
        JsonNode r = runJson("--endpoint", endpoint, "bandwidth", "--size", "64k", "--total", "32m", "--json");
        assertEquals("tcp", r.get("transport").asText());
        assertEquals("bandwidth", r.get("test").asText());
        assertEquals(65536, r.get("size").asLong());
        assertEquals(32L << 20, r.get("total_bytes").asLong());
        assertTrue(r.get("gb_per_s").asDouble() > 0, r::toString);
    }

    @Test
    void aBandwidthWarmupIsStreamedIntoTheSameSinkAndLeftOutOfTheTotal() throws Exception {
        String endpoint = serve("tcp://127.0.0.1:0");
        // the sink acknowledges warm-up and total together: a run whose announced total were short would fail
        JsonNode r = runJson("--endpoint", endpoint, "bandwidth", "--size", "64k", "--total", "8m", "--warmup", "3m",
                "--json");
        assertEquals(8L << 20, r.get("total_bytes").asLong());
        assertEquals(3L << 20, r.get("warmup_bytes").asLong());
        assertTrue(r.get("gb_per_s").asDouble() > 0, r::toString);
    }

    @Test
    void theResultNamesTheEndpointWithItsOptions() throws Exception {
        String endpoint = serve("tcp://127.0.0.1:0?busyPoll=1ms");
        JsonNode r = runJson("--endpoint", endpoint + "&connectTimeout=7s", "latency", "--iterations", "100",
                "--warmup", "10", "--json");
        assertEquals(Endpoint.parse(endpoint + "&connectTimeout=7s").toString(), r.get("endpoint").asText());
        assertTrue(r.get("endpoint").asText().contains("connectTimeout=7s"), r::toString);
    }
}
