package io.rdmacomm.servercomm;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * The server side of the workload {@code bin/aot} records servercomm's AOT cache with (JDK 25 and later,
 * {@code -XX:AOTCacheOutput}): one servercomm per endpoint given, all in this one JVM (each prints its
 * {@code listening URI} line), serving clientcomm's training commands until standard input ends; then the JVM exits
 * and writes the cache. It is not a tool: {@code bin/aot} runs it. A server that fails to start makes the exit
 * status 1 at once.
 *
 * <p>Usage: {@code AotTraining ENDPOINT...}
 */
public final class AotTraining {
    private AotTraining() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            System.err.println("usage: AotTraining ENDPOINT... (run by bin/aot)");
            System.exit(2);
        }
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        for (String endpoint : args) {
            Thread server = new Thread(() -> {
                int status = ServerMain.execute(new String[] {"--endpoint", endpoint}, out, err);
                if (status != 0) {
                    err.println("aot training: servercomm --endpoint " + endpoint + " failed (exit " + status + ")");
                    Runtime.getRuntime().halt(1);
                }
            }, "aot-training-" + endpoint);
            server.setDaemon(true);
            server.start();
        }
        // until bin/aot closes standard input (or ends)
        while (System.in.read() >= 0) {
            // a line is no reason to stop
        }
        System.exit(0);
    }
}
