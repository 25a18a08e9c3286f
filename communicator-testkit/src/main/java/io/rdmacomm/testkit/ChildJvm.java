package io.rdmacomm.testkit;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A second JVM for tests that need a real peer process: the running JVM's {@code java} with this JVM's class path,
 * and the flags and environment the launchers in {@code bin/} give the binaries, so the child behaves (and prints)
 * as a user's would. {@link #of(Path, List, Class, List)} starts another installed JDK instead.
 */
public final class ChildJvm {
    private static final Path JVMS = Path.of("/usr/lib/jvm");
    private static final Pattern JAVA_VERSION = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)");
    /**
     * The start of the notice rdma:// gives once per process, on stderr, where provider=ucx (the default) runs on the
     * slower ucx-jucx (RdmaCommunicatorProvider): on JDK 17-21 a child prints it however well all goes.
     */
    public static final String JUCX_NOTICE = "rdma:// runs on ucx-jucx, the slower UCX provider";

    private ChildJvm() {
    }

    /** A process builder for {@code main} with {@code args}, not started. */
    public static ProcessBuilder of(Class<?> main, List<String> args) {
        return of(List.of(), main, args);
    }

    /** The same with extra JVM options (system properties, heap size) before the main class. */
    public static ProcessBuilder of(List<String> jvmOptions, Class<?> main, List<String> args) {
        return of(Path.of(System.getProperty("java.home")), Runtime.version().feature(), jvmOptions,
                System.getProperty("java.class.path"), main, args);
    }

    /**
     * A process builder for {@code main} on the JDK at {@code javaHome} (e.g. {@link #installedJdk}) with the given
     * class path, not started; the flags are those that JDK's version accepts.
     */
    public static ProcessBuilder of(Path javaHome, List<String> classPath, Class<?> main, List<String> args)
            throws IOException {
        return of(javaHome, featureVersion(javaHome), List.of(), String.join(File.pathSeparator, classPath), main,
                args);
    }

    /**
     * The next line a child printed (null at its end of output), waiting at most {@code seconds}: a child that hangs
     * before it prints fails the test with a {@link TimeoutException} instead of blocking it.
     */
    public static String readLine(BufferedReader out, long seconds)
            throws InterruptedException, ExecutionException, TimeoutException {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }).get(seconds, TimeUnit.SECONDS);
    }

    /** {@code stderr} lines without the {@link #JUCX_NOTICE} line. */
    public static List<String> withoutJucxNotice(List<String> stderr) {
        return stderr.stream().filter(l -> !l.contains(JUCX_NOTICE)).toList();
    }

    /** {@code stderr} without the {@link #JUCX_NOTICE} line. */
    public static String withoutJucxNotice(String stderr) {
        return stderr.lines().filter(l -> !l.contains(JUCX_NOTICE)).map(l -> l + "\n")
                .collect(Collectors.joining());
    }

    /** A JDK of feature version {@code feature} installed under /usr/lib/jvm, if any. */
    public static Optional<Path> installedJdk(int feature) throws IOException {
        if (!Files.isDirectory(JVMS)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(JVMS)) {
            return homes.sorted().filter(h -> Files.isExecutable(h.resolve("bin").resolve("java")))
                    .filter(h -> {
                        try {
                            return featureVersion(h) == feature;
                        } catch (IOException e) {
                            return false;
                        }
                    }).findFirst();
        }
    }

    /** The feature version of the JDK at {@code javaHome}, from its {@code release} file. */
    static int featureVersion(Path javaHome) throws IOException {
        Path release = javaHome.resolve("release");
        Matcher m = JAVA_VERSION.matcher(Files.exists(release) ? Files.readString(release) : "");
        if (!m.find()) {
            throw new IOException(javaHome + " has no release file naming its JAVA_VERSION");
        }
        return Integer.parseInt(m.group(1));
    }

    private static ProcessBuilder of(Path javaHome, int feature, List<String> jvmOptions, String classPath,
            Class<?> main, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(javaHome.resolve("bin").resolve("java").toString());
        if (feature >= 22) {
            // JUCX and the FFM binding load native code; JDK 22+ warns on stderr unless it is enabled explicitly
            command.add("--enable-native-access=ALL-UNNAMED");
        }
        if (feature >= 23) {
            // protobuf and gRPC's Netty (kvstore) use sun.misc.Unsafe; JDK 24+ warns on stderr unless allowed
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        // DiSNI (provider=verbs) reads direct buffers' addresses through sun.nio.ch.DirectBuffer
        command.add("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED");
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(classPath);
        command.add(main.getName());
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        // UCX must leave the JVM's signal handlers alone, and logs to stdout, which is the tools' output
        pb.environment().put("UCX_ERROR_SIGNALS", "");
        pb.environment().putIfAbsent("UCX_LOG_LEVEL", "fatal");
        return pb;
    }
}
