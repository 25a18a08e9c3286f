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
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * bin/aot and the launchers' use of its caches, on the JDK running this test (JAVA_HOME): from JDK 25 bin/aot
 * records a cache of servercomm and of clientcomm, bin/servercomm and bin/clientcomm load their classes from it (and
 * still do their work), and a cache older than the build is left alone; before JDK 25 bin/aot refuses, saying why.
 * Needs the packaged build (bin/test runs verify, which packages every module first).
 */
class AotCacheTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final String JAVA_HOME = System.getProperty("java.home");
    private static final int JDK = Runtime.version().feature();
    private static final Pattern LISTENING = Pattern.compile("^listening (tcp://\\S+)");

    private record Run(int code, List<String> lines) {
        boolean says(String text) {
            return lines.stream().anyMatch(l -> l.contains(text));
        }

        @Override
        public String toString() {
            return "exit " + code + ":\n" + String.join("\n", lines);
        }
    }

    private static ProcessBuilder command(String... command) {
        ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", JAVA_HOME);
        pb.environment().remove("JAVA_OPTS");
        pb.environment().remove("RDMACOMM_AOT");
        return pb;
    }

    private static Run run(ProcessBuilder pb, long seconds) throws IOException, InterruptedException {
        Process p = pb.start();
        List<String> lines = new ArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = p.inputReader(StandardCharsets.UTF_8)) {
                r.lines().forEach(lines::add);
            } catch (IOException ignored) {
                // the process ended
            }
        });
        reader.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
        synchronized (lines) {
            return new Run(p.isAlive() ? -1 : p.exitValue(), List.copyOf(lines));
        }
    }

    /** Where the launchers look for MODULE's cache on this JDK (bin/lib/launch.sh, aot_cache_path). */
    private static Path cache(String module) throws IOException {
        String version = Files.readAllLines(Path.of(JAVA_HOME, "release")).stream()
                .filter(l -> l.startsWith("JAVA_VERSION=")).findFirst().orElseThrow()
                .replaceAll("^JAVA_VERSION=\"(.*)\"$", "$1");
        return ROOT.resolve(module + "/target/aot/" + module + "-jdk" + version + ".aot");
    }

    @Test
    @Timeout(180)
    void theToolsStartFromTheCachesBinAotRecordsOnJdk25AndLeaveAStaleOneAlone() throws Exception {
        Run aot = run(command("bin/aot", "--no-rdma"), 150);
        if (JDK < 25) {
            assertEquals(1, aot.code(), aot.toString());
            assertTrue(aot.says("needs JDK 25 or later"), aot.toString());
            return;
        }
        assertEquals(0, aot.code(), aot.toString());
        assertTrue(Files.size(cache("servercomm")) > 0 && Files.size(cache("clientcomm")) > 0, aot.toString());

        ProcessBuilder server = command("bin/servercomm", "--endpoint", "tcp://127.0.0.1:0");
        server.environment().put("JAVA_OPTS", "-Xlog:class+load");
        Process s = server.start();
        // closed by the process's end (a close here would wait for the drain's read)
        BufferedReader out = s.inputReader(StandardCharsets.UTF_8);
        try {
            String endpoint = null;
            boolean serverFromCache = false;
            for (String line; endpoint == null && (line = out.readLine()) != null; ) {
                serverFromCache |= line.contains("io.rdmacomm.servercomm.ServerMain source: shared objects file");
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    endpoint = m.group(1);
                }
            }
            assertTrue(endpoint != null, "servercomm did not listen");
            assertTrue(serverFromCache, "servercomm did not load ServerMain from its AOT cache");
            // the server logs every class it loads from now on: read it, so that it never blocks on a full pipe
            Thread drain = new Thread(() -> {
                try {
                    while (out.readLine() != null) {
                        // dropped
                    }
                } catch (IOException ignored) {
                    // the process ended
                }
            }, "servercomm-output");
            drain.setDaemon(true);
            drain.start();

            ProcessBuilder hello = command("bin/clientcomm", "--endpoint", endpoint, "hello", "--message", "cached");
            hello.environment().put("JAVA_OPTS", "-Xlog:class+load");
            Run cached = run(hello, 60);
            assertEquals(0, cached.code(), cached.toString());
            assertTrue(cached.lines().contains("cached"), cached.toString());
            assertTrue(cached.says("io.rdmacomm.clientcomm.ClientMain source: shared objects file"), cached.toString());

            // older than every jar of the build: the launcher leaves it out, and clientcomm loads from the jars
            Files.setLastModifiedTime(cache("clientcomm"), FileTime.from(Instant.parse("2000-01-01T00:00:00Z")));
            Run stale = run(hello, 60);
            assertEquals(0, stale.code(), stale.toString());
            assertTrue(stale.lines().contains("cached"), stale.toString());
            assertTrue(stale.says("io.rdmacomm.clientcomm.ClientMain source: file:"), stale.toString());
        } finally {
            s.destroy();
            if (!s.waitFor(20, TimeUnit.SECONDS)) {
                s.destroyForcibly();
            }
            Files.deleteIfExists(cache("clientcomm"));
            Files.deleteIfExists(cache("servercomm"));
        }
    }
}
