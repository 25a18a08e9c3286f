package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.clientcomm.ClientMain;
import io.rdmacomm.servercomm.ServerMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A short run of {@code bin/fault-inject} (the full run is 100 trials per transport; docs/security.md): SIGKILL
 * and SIGSTOP of clients and of the server at random points of the exchanges, on servercomm and clientcomm JVMs
 * started from this class path. The script's exit status carries the verdict: no hang, every failing client said
 * why, and the server's fds, threads, live sessions and registered memory (its {@code clientcomm stats}) back to
 * their baseline.
 */
@Timeout(300)
class FaultInjectionTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final int TRIALS = 6;

    /** A launcher script for {@code main} that runs it as {@link Jvms#java} would. */
    private static Path launcher(Path dir, Class<?> main) throws Exception {
        String command = Jvms.java(main, List.of()).command().stream().map(s -> "'" + s.replace("'", "'\\''") + "'")
                .collect(Collectors.joining(" "));
        Path script = dir.resolve(main.getSimpleName());
        Files.writeString(script, "#!/bin/sh\nexport UCX_ERROR_SIGNALS= UCX_LOG_LEVEL=fatal\nexec " + command
                + " \"$@\"\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void noHangsNoLeaksWhenEitherSideIsKilledOrStopped(String scheme, @TempDir Path dir) throws Exception {
        Jvms.assumeAvailable(scheme);
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "bin/fault-inject needs /usr/bin/python3");
        Path log = dir.resolve("fault-inject.log");
        Process p = new ProcessBuilder("python3", ROOT.resolve("bin/fault-inject").toString(), "--scheme", scheme,
                "--trials", String.valueOf(TRIALS), "--seed", "12", "--settle", "20",
                "--servercomm", launcher(dir, ServerMain.class).toString(),
                "--clientcomm", launcher(dir, ClientMain.class).toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        boolean ended = p.waitFor(240, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        String report = Files.readString(log);
        assertTrue(ended, "bin/fault-inject did not finish:\n" + report);
        assertTrue(report.contains(TRIALS + " trials (seed 12), 0 hangs, 0 failures without a message"), report);
        assertEquals(0, p.exitValue(), report);
    }
}
