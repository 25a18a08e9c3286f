package io.rdmacomm.testkit;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A second JVM for tests that need a real peer process: the running JVM's {@code java} with this JVM's class path,
 * and the flags and environment the launchers in {@code bin/} give the binaries, so the child behaves (and prints)
 * as a user's would.
 */
public final class ChildJvm {
    private ChildJvm() {
    }

    /** A process builder for {@code main} with {@code args}, not started. */
    public static ProcessBuilder of(Class<?> main, List<String> args) {
        return of(List.of(), main, args);
    }

    /** The same with extra JVM options (system properties, heap size) before the main class. */
    public static ProcessBuilder of(List<String> jvmOptions, Class<?> main, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (Runtime.version().feature() >= 22) {
            // JUCX and the FFM binding load native code; JDK 22+ warns on stderr unless it is enabled explicitly
            command.add("--enable-native-access=ALL-UNNAMED");
        }
        if (Runtime.version().feature() >= 23) {
            // protobuf and gRPC's Netty (kvstore) use sun.misc.Unsafe; JDK 24+ warns on stderr unless allowed
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        // DiSNI (provider=verbs) reads direct buffers' addresses through sun.nio.ch.DirectBuffer
        command.add("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED");
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        // UCX must leave the JVM's signal handlers alone, and logs to stdout, which is the tools' output
        pb.environment().put("UCX_ERROR_SIGNALS", "");
        pb.environment().putIfAbsent("UCX_LOG_LEVEL", "fatal");
        return pb;
    }
}
