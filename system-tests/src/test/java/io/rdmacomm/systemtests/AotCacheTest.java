package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * bin/aot and the launchers' use of its caches, on the JDK running this test (JAVA_HOME): from JDK 25 bin/aot
 * records a cache of servercomm and of clientcomm, bin/servercomm and bin/clientcomm load their classes from it (and
 * still do their work) without a word from the JVM about it, and a cache older than the build, or a JAVA_OPTS of
 * one's own, leaves it out; before JDK 25
 * bin/aot refuses, saying why. Needs the packaged build (bin/test runs verify, which packages every module first).
 * Caches recorded before the test are put back after it.
 */
class AotCacheTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final String JAVA_HOME = System.getProperty("java.home");
    private static final int JDK = Runtime.version().feature();
    private static final Pattern LISTENING = Pattern.compile("^listening (tcp://\\S+)");
    private static final String FROM_CACHE = " source: shared objects file";
    private static final List<String> MODULES = List.of("servercomm", "clientcomm");
    private static final String CLIENT_MAIN = "io.rdmacomm.clientcomm.ClientMain";

    private record Run(int code, List<String> lines) {
        boolean says(String text) {
            return lines.stream().anyMatch(l -> l.contains(text));
        }

        @Override
        public String toString() {
            return "exit " + code + ":\n" + String.join("\n", lines);
        }
    }

    private static ProcessBuilder command(String javaOpts, String... command) {
        ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", JAVA_HOME);
        pb.environment().remove("RDMACOMM_AOT");
        if (javaOpts == null) {
            pb.environment().remove("JAVA_OPTS");
        } else {
            pb.environment().put("JAVA_OPTS", javaOpts);
        }
        return pb;
    }

    /** bin/clientcomm hello, logging the classes it loads (JDK_JAVA_OPTIONS), with JAVA_OPTS if not null. */
    private static ProcessBuilder hello(String endpoint, String message, String javaOpts) {
        ProcessBuilder pb = command(javaOpts, "bin/clientcomm", "--endpoint", endpoint, "hello", "--message", message);
        pb.environment().put("JDK_JAVA_OPTIONS", "-Xlog:class+load");
        return pb;
    }

    /** Kills a launcher's process and the JVM it became or started. */
    private static void kill(Process p) throws InterruptedException {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
    }

    /** Runs a command to its end, by {@code deadline} (System.nanoTime()); its output lines, stderr included. */
    private static Run run(ProcessBuilder pb, long deadline) throws IOException, InterruptedException {
        Process p = pb.start();
        List<String> lines = new ArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = p.inputReader(StandardCharsets.UTF_8)) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (lines) {
                        lines.add(line);
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        if (!p.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            kill(p);
        }
        reader.join(TimeUnit.SECONDS.toMillis(5));
        synchronized (lines) {
            return new Run(p.isAlive() ? -1 : p.exitValue(), List.copyOf(lines));
        }
    }

    /** MODULE's cache directory, where bin/aot puts it and the launchers look (bin/lib/launch.sh). */
    private static Path cacheDir(String module) {
        return ROOT.resolve(module + "/target/aot");
    }

    /** The cache of MODULE bin/aot recorded for this JDK: the one file in its directory. */
    private static Path cache(String module) throws IOException {
        try (Stream<Path> files = Files.list(cacheDir(module))) {
            List<Path> caches = files.filter(f -> f.getFileName().toString().endsWith(".aot")).toList();
            assertEquals(1, caches.size(), "caches of " + module + ": " + caches);
            return caches.get(0);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> all = Files.walk(dir)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    @Test
    @Timeout(240)
    void theToolsStartFromTheCachesBinAotRecordsOnJdk25AndLeaveAStaleOneAlone() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(200);
        if (JDK < 25) {
            Run aot = run(command(null, "bin/aot", "--no-rdma"), deadline);
            assertEquals(1, aot.code(), aot.toString());
            assertTrue(aot.says("needs JDK 25 or later"), aot.toString());
            return;
        }
        // a developer's own caches stay theirs
        for (String module : MODULES) {
            Path saved = cacheDir(module).resolveSibling("aot.before-AotCacheTest");
            deleteTree(saved);
            if (Files.exists(cacheDir(module))) {
                Files.move(cacheDir(module), saved);
            }
        }
        Process s = null;
        try {
            Run aot = run(command(null, "bin/aot", "--no-rdma"), deadline);
            assertEquals(0, aot.code(), aot.toString());
            assertTrue(Files.size(cache("servercomm")) > 0 && Files.size(cache("clientcomm")) > 0, aot.toString());

            // -Xlog through JDK_JAVA_OPTIONS, which the java launcher reads: JAVA_OPTS of one's own turn the cache off
            ProcessBuilder serverCommand = command(null, "bin/servercomm", "--endpoint", "tcp://127.0.0.1:0");
            serverCommand.environment().put("JDK_JAVA_OPTIONS", "-Xlog:class+load");
            s = serverCommand.start();
            BlockingQueue<String> serverLines = new LinkedBlockingQueue<>();
            Process server = s;
            // the server logs every class it loads: read all of it, so that it never blocks on a full pipe
            Thread drain = new Thread(() -> {
                try (BufferedReader out = server.inputReader(StandardCharsets.UTF_8)) {
                    for (String line; (line = out.readLine()) != null; ) {
                        serverLines.add(line);
                    }
                } catch (IOException ignored) {
                    // the process ended
                }
            }, "servercomm-output");
            drain.setDaemon(true);
            drain.start();
            String endpoint = null;
            boolean serverFromCache = false;
            while (endpoint == null) {
                String line = serverLines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                assertTrue(line != null, "servercomm did not listen in time");
                serverFromCache |= line.contains("io.rdmacomm.servercomm.ServerMain" + FROM_CACHE);
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    endpoint = m.group(1);
                }
            }
            assertTrue(serverFromCache, "servercomm did not load ServerMain from its AOT cache");

            Run cached = run(hello(endpoint, "cached", null), deadline);
            assertEquals(0, cached.code(), cached.toString());
            assertTrue(cached.lines().contains("cached"), cached.toString());
            assertTrue(cached.says(CLIENT_MAIN + FROM_CACHE), cached.toString());
            assertTrue(cached.lines().stream().noneMatch(l -> l.contains("[aot]")), "the JVM spoke of the cache: "
                    + cached);

            // a JAVA_OPTS of one's own: without the cache
            Run ownOptions = run(hello(endpoint, "own options", "-Xmx256m"), deadline);
            assertEquals(0, ownOptions.code(), ownOptions.toString());
            assertTrue(ownOptions.lines().contains("own options"), ownOptions.toString());
            assertTrue(ownOptions.says(CLIENT_MAIN + " source: file:"), ownOptions.toString());

            // older than every jar of the build: the launcher leaves it out
            Files.setLastModifiedTime(cache("clientcomm"), FileTime.from(Instant.parse("2000-01-01T00:00:00Z")));
            Run stale = run(hello(endpoint, "stale", null), deadline);
            assertEquals(0, stale.code(), stale.toString());
            assertTrue(stale.lines().contains("stale"), stale.toString());
            assertTrue(stale.says(CLIENT_MAIN + " source: file:"), stale.toString());
        } finally {
            if (s != null) {
                kill(s);
            }
            for (String module : MODULES) {
                deleteTree(cacheDir(module));
                Path saved = cacheDir(module).resolveSibling("aot.before-AotCacheTest");
                if (Files.exists(saved)) {
                    Files.move(saved, cacheDir(module));
                }
            }
        }
    }
}
