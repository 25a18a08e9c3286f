package io.rdmacomm.clientcomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.cli.Cli;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** Argument validation: every bad argument is refused before anything connects, naming what was wrong. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BenchCommandTest extends CommandLineTest {
    /** {@code bench} on its own, with the error reporting clientcomm gives it. */
    static CommandLine bench() {
        return Cli.withErrorReporting(new CommandLine(new BenchCommand()), "bench", () -> false);
    }

    @Override
    CommandLine commandLine() {
        return bench();
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
    void benchOffersOurBenchmarksAndNoBaseline() {
        assertEquals(Set.of("latency", "bandwidth"), bench().getSubcommands().keySet());
        assertEquals(0, run("--help"));
        assertTrue(out.toString().contains("run from bench/baseline"), out::toString);
    }
}
