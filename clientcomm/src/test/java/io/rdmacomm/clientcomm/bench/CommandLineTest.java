package io.rdmacomm.clientcomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs a command line with its output kept, for the tests of {@code clientcomm bench}. */
abstract class CommandLineTest {
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();

    /** A fresh command line under test, with the error reporting of its binary. */
    abstract CommandLine commandLine();

    int run(String... args) {
        CommandLine cl = commandLine();
        cl.setErr(new PrintWriter(err, true));
        cl.setOut(new PrintWriter(out, true));
        return cl.execute(args);
    }

    /** The arguments are a usage error (exit 2) whose message contains {@code expected}. */
    void assertRefused(String expected, String... args) {
        assertEquals(2, run(args), err::toString);
        assertTrue(err.toString().contains(expected), () -> "expected '" + expected + "' in: " + err);
    }
}
