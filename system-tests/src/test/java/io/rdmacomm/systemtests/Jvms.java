package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.clientcomm.ClientMain;
import io.rdmacomm.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * servercomm and clientcomm as separate JVMs, started from the test's class path with the running JVM's
 * {@code java}: what a user gets from the launchers.
 */
final class Jvms {
    static final long CLIENT_SECONDS = 60;
    private static final Pattern LISTENING = Pattern.compile("listening ([a-z]+://127\\.0\\.0\\.1:(\\d+)(\\?\\S+)?)");

    private Jvms() {
    }

    /** A finished clientcomm: exit code and its stdout and stderr lines. */
    record Result(int code, List<String> out, List<String> err) {
        /**
         * stderr without the notice rdma:// gives once per process when it runs on ucx-jucx by default (JDK 17-21;
         * {@link ChildJvm#JUCX_NOTICE}): what the client itself had to say.
         */
        List<String> errBesidesJucxNotice() {
            assertTrue(err.size() - ChildJvm.withoutJucxNotice(err).size() <= 1, "the notice once at most: " + this);
            return ChildJvm.withoutJucxNotice(err);
        }

        @Override
        public String toString() {
            return "exit " + code + "\nstdout:\n" + String.join("\n", out) + "\nstderr:\n" + String.join("\n", err);
        }
    }

    /**
     * JVM options of every child: C1 only ({@code -XX:TieredStopAtLevel=1}). The children are short-lived
     * servercomm and clientcomm processes whose run is mostly JVM start-up and class loading, where C2 costs CPU
     * time and gives nothing back (a clientcomm {@code write --size 3m} takes about 0.8 s of CPU instead of 1.3 s on
     * JDK 17); the JIT tier changes how fast they run, not what they do or print.
     */
    static final List<String> JVM_OPTIONS = List.of("-XX:TieredStopAtLevel=1");

    static ProcessBuilder java(Class<?> main, List<String> args) {
        return ChildJvm.of(JVM_OPTIONS, main, args);
    }

    /** Runs clientcomm with {@code args} to its end (at most {@link #CLIENT_SECONDS}), output kept in {@code dir}. */
    static Result client(Path dir, String... args) throws Exception {
        Path out = Files.createTempFile(dir, "client", ".out");
        Path err = Files.createTempFile(dir, "client", ".err");
        Process p = java(ClientMain.class, List.of(args)).redirectOutput(out.toFile()).redirectError(err.toFile())
                .start();
        if (!p.waitFor(CLIENT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("clientcomm " + String.join(" ", args) + " did not finish within " + CLIENT_SECONDS + " s");
        }
        return new Result(p.exitValue(), lines(Files.readAllBytes(out)), lines(Files.readAllBytes(err)));
    }

    /** {@link #client} in another thread. */
    /**
     * Runs clientcomm in a thread of its own: clients that meet in a group must all run at once, which the common
     * pool does not promise (its parallelism follows the machine's core count).
     */
    static CompletableFuture<Result> clientAsync(Path dir, String... args) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return client(dir, args);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, task -> {
            Thread t = new Thread(task, "clientcomm " + String.join(" ", args));
            t.setDaemon(true);
            t.start();
        });
    }

    /** Waits for servercomm's first line and returns the endpoint it listens on. */
    static String awaitListening(Process p) throws Exception {
        BufferedReader stdout = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = ChildJvm.readLine(stdout, 60);
        if (line == null) {
            fail("servercomm exited before listening: exit " + p.waitFor());
        }
        Matcher m = LISTENING.matcher(line);
        assertTrue(m.matches(), "unexpected first line from servercomm: " + line);
        assertNotEquals("0", m.group(2));
        return m.group(1);
    }

    /**
     * Skips the calling test (with the reason) where {@code scheme} cannot run: rdma:// needs transport-rdma on the
     * class path and a working provider (UCX). On CI ({@code CI=true}) that is a failure instead.
     */
    static void assumeAvailable(String scheme) {
        Optional<String> cause = unavailable(scheme);
        if (cause.isPresent() && "true".equalsIgnoreCase(System.getenv("CI"))) {
            fail(scheme + ":// must run on CI but cannot: " + cause.get());
        }
        assumeTrue(cause.isEmpty(), () -> cause.orElseThrow());
    }

    private static Optional<String> unavailable(String scheme) {
        CommunicatorProvider provider = Communicators.providers().get(scheme);
        if (provider == null) {
            return Optional.of("no provider for " + scheme + ":// on the class path");
        }
        try {
            return provider.unavailabilityCause(Endpoint.parse(scheme + "://127.0.0.1:0"));
        } catch (ServiceConfigurationError | LinkageError e) {
            return Optional.of(scheme + ":// provider is broken on this class path: " + e);
        }
    }

    static List<String> lines(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8).lines().toList();
    }
}
