package io.rdmacomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** Argument validation: every bad argument is refused before anything connects, naming what was wrong. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BenchCommandTest {
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cl = BenchCommand.commandLine();
        cl.setErr(new PrintWriter(err, true));
        cl.setOut(new PrintWriter(new StringWriter(), true));
        return cl.execute(args);
    }

    private void assertRefused(String expected, String... args) {
        assertEquals(2, run(args), err::toString);
        assertTrue(err.toString().contains(expected), () -> "expected '" + expected + "' in: " + err);
    }

    @Test
    void aSizeThatIsNotASizeIsNamed() {
        assertRefused("bad size 'eight'", "--endpoint", "tcp://127.0.0.1:1", "latency", "--size", "eight");
    }

    @Test
    void aZeroSizeIsRefused() {
        assertRefused("--size must be between 1 and 1g bytes, got 0", "--endpoint", "tcp://127.0.0.1:1",
                "bandwidth", "--size", "0");
    }

    @Test
    void iterationsMustBePositive() {
        assertRefused("--iterations must be at least 1, got 0", "--endpoint", "tcp://127.0.0.1:1", "latency",
                "--iterations", "0");
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
    void withoutAnEndpointTheCommandSaysSo() {
        assertRefused("no endpoint: give --endpoint URI", "latency");
    }

    @Test
    void aBadEndpointIsNamed() {
        assertRefused("tcp://127.0.0.1:http", "--endpoint", "tcp://127.0.0.1:http", "latency");
    }

    @Test
    void anUnknownSchemeNamesTheKnownOnes() {
        assertEquals(1, run("--endpoint", "nope://x:1", "latency"), err::toString);
        assertTrue(err.toString().contains("unknown scheme 'nope://'; available schemes: "), err::toString);
    }

    @Test
    void theRawBaselinesNeedATcpEndpoint() {
        assertRefused("give a tcp:// endpoint, got local://x", "--endpoint", "local://x", "raw-latency");
    }

    @Test
    void aRefusedConnectionIsOneLineAndExitOne() throws Exception {
        int port;
        try (var s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        assertEquals(1, run("--endpoint", "tcp://127.0.0.1:" + port, "raw-latency", "--iterations", "1"));
        assertTrue(err.toString().startsWith("bench: cannot connect to raw baseline server 127.0.0.1:" + port),
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
    void theRawUcxCommandsAreListedInBenchHelp() {
        StringWriter out = new StringWriter();
        CommandLine cl = BenchCommand.commandLine();
        cl.setOut(new PrintWriter(out, true));
        assertEquals(0, cl.execute("--help"));
        for (String name : new String[] {"raw-ucx-serve", "raw-ucx-latency", "raw-ucx-bandwidth"}) {
            assertTrue(out.toString().contains("  " + name + " "), () -> name + " missing in:\n" + out);
        }
    }
}
