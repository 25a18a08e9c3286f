package io.rdmacomm.clientcomm;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;

/**
 * The workload {@code bin/aot} records clientcomm's AOT cache with (JDK 25 and later, {@code -XX:AOTCacheOutput}):
 * clientcomm's own commands, one after another in this one JVM, against every endpoint given (servercomms that
 * {@code bin/aot} started), so that the classes they load and the profiles of their methods end up in one cache.
 * It is not a tool: {@code bin/aot} runs it. The commands' output is dropped; a command that fails is reported on
 * stderr and makes the exit status 1.
 *
 * <p>Usage: {@code AotTraining ENDPOINT...}
 */
public final class AotTraining {
    /** The commands run against each endpoint, after {@code --endpoint URI}. */
    static final List<List<String>> COMMANDS = List.of(
            List.of("hello", "--message", "training"),
            List.of("echo", "--size", "8", "--count", "2000"),
            List.of("echo", "--size", "64k", "--count", "200"),
            List.of("echo", "--size", "1m", "--count", "20"),
            List.of("send", "--message", "training"),
            List.of("write", "--size", "1m"),
            List.of("read", "--length", "4096"),
            List.of("call", "upper", "--input", "training"),
            List.of("stats"),
            List.of("bench", "latency", "--iterations", "20000", "--warmup", "2000", "--json"),
            List.of("bench", "bandwidth", "--size", "1m", "--total", "256m", "--warmup", "0", "--json"));

    private AotTraining() {
    }

    public static void main(String[] args) {
        if (args.length == 0) {
            System.err.println("usage: AotTraining ENDPOINT... (run by bin/aot)");
            System.exit(2);
        }
        PrintWriter err = new PrintWriter(System.err, true);
        int failed = 0;
        for (String endpoint : args) {
            for (List<String> command : COMMANDS) {
                List<String> argv = new ArrayList<>(List.of("--endpoint", endpoint));
                argv.addAll(command);
                Writer dropped = new StringWriter();
                int status = ClientMain.execute(argv.toArray(String[]::new), new PrintWriter(dropped, true), err);
                if (status != 0) {
                    err.println("aot training: clientcomm " + String.join(" ", argv) + " failed (exit " + status + ")");
                    failed++;
                }
            }
        }
        System.exit(failed == 0 ? 0 : 1);
    }
}
