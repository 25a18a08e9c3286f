package io.rdmacomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rdmacomm.clientcomm.bench.Json;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The baselines' command line: every bad argument is refused before anything connects, naming what was wrong; a
 * raw run prints the JSON that bench/compare reads.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BaselineMainTest extends CommandLineTest {
    @Override
    CommandLine commandLine() {
        return BaselineMain.commandLine();
    }

    @Test
    void warmupMustNotBeNegative() {
        assertRefused("--warmup must not be negative, got -1", "--endpoint", "tcp://127.0.0.1:1", "raw-latency",
                "--warmup", "-1");
    }

    @Test
    void theTotalMustBePositive() {
        assertRefused("--total must be at least 1 byte, got 0", "--endpoint", "tcp://127.0.0.1:1",
                "raw-bandwidth", "--total", "0");
    }

    @Test
    void anUnknownModeIsNamed() {
        assertRefused("unknown mode 'fast': expected blocking or busy-poll", "--endpoint", "tcp://127.0.0.1:1",
                "raw-latency", "--mode", "fast");
    }

    @Test
    void theRawBaselinesNeedATcpEndpoint() {
        assertRefused("give a tcp:// endpoint, got local://x", "--endpoint", "local://x", "raw-latency");
    }

    @Test
    void withoutAnEndpointTheCommandSaysSo() {
        assertRefused("no endpoint: give --endpoint URI", "raw-serve");
    }

    @Test
    void aRefusedConnectionIsOneLineAndExitOne() throws Exception {
        int port;
        try (var s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        assertEquals(1, run("--endpoint", "tcp://127.0.0.1:" + port, "raw-latency", "--iterations", "1"));
        assertTrue(err.toString().startsWith("baseline: cannot connect to raw baseline server 127.0.0.1:" + port),
                err::toString);
        assertEquals(1, err.toString().lines().count(), err::toString);
    }

    @Test
    void theRawUcxBaselinesNeedAnRdmaEndpoint() {
        assertRefused("give an rdma:// endpoint, got tcp://127.0.0.1:1", "--endpoint", "tcp://127.0.0.1:1",
                "raw-ucx-latency");
        assertRefused("give an rdma:// endpoint, got tcp://127.0.0.1:0", "--endpoint", "tcp://127.0.0.1:0",
                "raw-ucx-serve");
    }

    @Test
    void theRawUcxBaselinesTakeNoEndpointOptionButConnectTimeout() {
        assertRefused("takes no endpoint option but connectTimeout, got busyPoll in rdma://127.0.0.1:0?busyPoll=1ms",
                "--endpoint", "rdma://127.0.0.1:0?busyPoll=1ms", "raw-ucx-serve");
        assertRefused("got provider in", "--endpoint", "rdma://127.0.0.1:1?provider=verbs", "raw-ucx-bandwidth");
    }

    @Test
    void theRawUcxOptionsAreCheckedBeforeAnythingConnects() {
        assertRefused("--total must be at least 1 byte, got 0", "--endpoint", "rdma://127.0.0.1:1",
                "raw-ucx-bandwidth", "--total", "0");
        assertRefused("--size must be between 1 and 1g bytes, got 0", "--endpoint", "rdma://127.0.0.1:1",
                "raw-ucx-latency", "--size", "0");
        assertRefused("--iterations must be at least 1, got 0", "--endpoint", "rdma://127.0.0.1:1?connectTimeout=1s",
                "raw-ucx-latency", "--iterations", "0");
    }

    @Test
    void thePutBaselinesNameABadTargetMemoryAndIdleTime() {
        assertRefused("unknown target memory 'gpu': expected ucx or mapped", "--endpoint", "rdma://127.0.0.1:1",
                "raw-ucx-put-bandwidth", "--target-memory", "gpu");
        assertRefused("--idle-for must be between 1ms and 60s, got 2m", "--endpoint", "rdma://127.0.0.1:1",
                "raw-ucx-idle-put", "--idle-for", "2m");
    }

    @Test
    void theIdlePutRunsFewRoundTripsUnlessToldOtherwise() {
        CommandSpec idlePut = BaselineMain.commandLine().parseArgs("raw-ucx-idle-put").subcommand().commandSpec();
        assertEquals(20L, idlePut.findOption("--iterations").<Long>getValue());
        assertEquals(5L, idlePut.findOption("--warmup").<Long>getValue());
        CommandSpec latency = BaselineMain.commandLine().parseArgs("raw-ucx-latency").subcommand().commandSpec();
        assertEquals(100_000L, latency.findOption("--iterations").<Long>getValue());
    }

    @Test
    void theRawCommandsAreListedInBaselineHelp() {
        assertEquals(0, run("--help"));
        for (String name : new String[] {"raw-serve", "raw-latency", "raw-bandwidth", "raw-ucx-serve",
            "raw-ucx-latency", "raw-ucx-bandwidth", "raw-ucx-put-bandwidth", "raw-ucx-put-latency",
            "raw-ucx-idle-put"}) {
            assertTrue(out.toString().contains("  " + name + " "), () -> name + " missing in:\n" + out);
        }
    }

    @Test
    void aRawLatencyRunPrintsTheJsonOfOurs() throws Exception {
        try (RawServer server = RawServer.start(new InetSocketAddress("127.0.0.1", 0), System.err,
                RawServer.DEFAULT_SINK_BUFFER)) {
            assertEquals(0, run("--endpoint", "tcp://127.0.0.1:" + server.port(), "raw-latency", "--mode",
                    "busy-poll", "--iterations", "200", "--warmup", "50", "--json"), err::toString);
        }
        assertEquals("", err.toString(), "--json must suppress progress");
        JsonNode r = Json.MAPPER.readTree(out.toString());
        assertEquals("raw-nio", r.get("transport").asText());
        assertEquals("latency", r.get("test").asText());
        assertEquals("busy-poll", r.get("mode").asText());
        assertEquals(200, r.get("iterations").asLong());
        assertTrue(r.get("p50_us").asDouble() > 0, r::toString);
    }

    @Test
    void coreToCoreMeasuresTheMachineAndRefusesBadCounts() throws Exception {
        assertRefused("--round-trips must be positive, got 0", "core-to-core", "--round-trips", "0");
        assertRefused("--seconds must be 0 to 3600, got -1.0", "core-to-core", "--seconds", "-1");
        assertEquals(0, run("core-to-core", "--round-trips", "2000", "--handovers", "4", "--json"), err::toString);
        JsonNode r = Json.MAPPER.readTree(out.toString());
        assertEquals(2000, r.get("round_trips").asLong());
        assertTrue(r.get("round_trip_ns").asDouble() > 0, r::toString);
        assertTrue(r.get("handover_gb_per_s").asDouble() > 0, r::toString);
    }

    @Test
    void coreToCoreOverSecondsSummarisesItsProbes() throws Exception {
        assertEquals(0, run("core-to-core", "--seconds", "0.5", "--json"), err::toString);
        JsonNode r = Json.MAPPER.readTree(out.toString());
        assertTrue(r.get("probes").asInt() >= 1, r::toString);
        double min = r.get("handover_gb_per_s_min").asDouble();
        double median = r.get("handover_gb_per_s_median").asDouble();
        assertTrue(min > 0 && min <= median && median <= r.get("handover_gb_per_s_max").asDouble(), r::toString);
        double slow = r.get("slow_share").asDouble();
        assertTrue(slow >= 0 && slow < 1, r::toString); // the best probe itself is never below half of itself
        double windows = r.get("windows_min_over_median").asDouble();
        assertTrue(windows > 0 && windows <= 1, r::toString);
    }
}
