package io.rdmacomm.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class VerbsProbeTest {
    private static final VerbsProbe.LibraryLoader LOADS = () -> { };
    private static final VerbsProbe.VersionCheck MATCHES = () -> { };
    private static final VerbsProbe.DeviceLister ONE_DEVICE = () -> List.of("mlx5_0");

    private static boolean libdisniOnPath() {
        return Arrays.stream(System.getProperty("java.library.path", "").split(File.pathSeparator))
                .anyMatch(d -> !d.isEmpty() && Files.exists(Path.of(d, "libdisni.so")));
    }

    private static String cause(VerbsProbe probe) {
        Optional<String> c = probe.unavailabilityCause();
        assertTrue(c.isPresent(), "expected the probe to report a cause");
        return c.get();
    }

    // ---- real calls: what happens on this machine -----------------------------------------------------------

    @Test
    void realProbeReportsMissingLibdisniWithPathAndFix() {
        assumeFalse(libdisniOnPath(), "libdisni is installed on this machine");
        String c = cause(VerbsProbe.system());
        String path = System.getProperty("java.library.path");
        assertTrue(c.contains("libdisni") && c.contains("not on java.library.path (" + path + ")"), c);
        assertTrue(c.contains("-Djava.library.path="), c);
        assertTrue(c.contains("./configure --with-jdk="), c);
        assertTrue(c.contains("no disni in java.library.path"), "the JVM's own words are kept: " + c);
        assertEquals(c, VerbsProbe.system().unavailabilityCause().orElseThrow(), "the answer is stable");
    }

    @Test
    void realExportsCheckMatchesTheJvmFlags() throws Exception {
        assumeFalse(libdisniOnPath(), "libdisni is installed on this machine");
        String without = runProbeJvm(List.of());
        String with = runProbeJvm(List.of("--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"));
        assertTrue(without.contains("--add-exports java.base/sun.nio.ch=ALL-UNNAMED"), without);
        assertTrue(without.contains("not on java.library.path"), without);
        assertFalse(with.contains("--add-exports"), with);
        assertTrue(with.contains("not on java.library.path"), with);
    }

    /** Runs {@link ProbeMain} in a fresh JVM, so that libdisni loading and module exports are really its own. */
    private static String runProbeJvm(List<String> jvmFlags) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ProbeMain.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "probe JVM did not exit");
        String text = new String(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), text);
        return text;
    }

    // ---- the other branches, through injected checks --------------------------------------------------------

    @Test
    void everythingPresentMeansAvailable() {
        VerbsProbe probe = new VerbsProbe(LOADS, MATCHES, ONE_DEVICE, () -> true, () -> true, "/opt/disni");
        assertEquals(Optional.empty(), probe.unavailabilityCause());
    }

    @Test
    void missingLibraryNamesThePathAndTheFix() {
        VerbsProbe probe = new VerbsProbe(() -> {
            throw new UnsatisfiedLinkError("no disni in java.library.path: /a:/b");
        }, MATCHES, ONE_DEVICE, () -> true, () -> true, "/a:/b");
        String c = cause(probe);
        assertTrue(c.contains("not on java.library.path (/a:/b)"), c);
        assertTrue(c.contains("libibverbs-dev, librdmacm-dev"), c);
        assertTrue(c.contains("LD_LIBRARY_PATH"), c);
    }

    @Test
    void libdisniFoundButRdmaCoreMissingSaysWhichPackages() {
        VerbsProbe probe = new VerbsProbe(() -> {
            throw new UnsatisfiedLinkError("/opt/disni/libdisni.so.0: libibverbs.so.1: cannot open shared object file");
        }, MATCHES, ONE_DEVICE, () -> true, () -> true, "/opt/disni");
        String c = cause(probe);
        assertTrue(c.startsWith("libdisni was found but cannot be loaded because rdma-core"), c);
        assertTrue(c.contains("apt-get install libibverbs1 librdmacm1"), c);
        assertTrue(c.contains("libibverbs.so.1: cannot open"), c);
    }

    @Test
    void libdisniOfAnotherArchitectureIsUnloadableNotMissing() {
        VerbsProbe probe = new VerbsProbe(() -> {
            throw new UnsatisfiedLinkError("/opt/disni/libdisni.so: wrong ELF class: ELFCLASS32");
        }, MATCHES, ONE_DEVICE, () -> true, () -> true, "/opt/disni");
        String c = cause(probe);
        assertTrue(c.startsWith("libdisni was found but cannot be loaded [/opt/disni/libdisni.so: wrong ELF"), c);
    }

    @Test
    void dispatcherThatFailedEarlierInThisJvmIsReportedAsMissingLibrary() {
        VerbsProbe probe = new VerbsProbe(() -> {
            throw new NoClassDefFoundError("Could not initialize class com.ibm.disni.verbs.impl.NativeDispatcher");
        }, MATCHES, ONE_DEVICE, () -> true, () -> true, "/x");
        assertTrue(cause(probe).contains("not on java.library.path (/x)"));
    }

    @Test
    void missingJarIsNamed() {
        VerbsProbe probe = new VerbsProbe(() -> {
            throw new NoClassDefFoundError("com/ibm/disni/verbs/impl/NativeDispatcher");
        }, MATCHES, ONE_DEVICE, () -> true, () -> true, "/x");
        assertTrue(cause(probe).startsWith("the DiSNI jar (com.ibm.disni:disni:2.1) is not on the class path"));
    }

    @Test
    void jniVersionMismatchIsDistinct() {
        VerbsProbe probe = new VerbsProbe(LOADS, () -> {
            throw new IOException("jverbs outdated, version found 31, version required 32");
        }, ONE_DEVICE, () -> true, () -> true, "/opt/disni");
        String c = cause(probe);
        assertTrue(c.startsWith("libdisni on java.library.path does not match the DiSNI 2.1 jar"), c);
        assertTrue(c.contains("version found 31, version required 32"), c);
        assertTrue(c.contains("rebuild and reinstall libdisni"), c);
        assertFalse(c.contains("no RDMA device"), c);
    }

    @Test
    void missingJniSymbolIsAVersionMismatch() {
        VerbsProbe probe = new VerbsProbe(LOADS, () -> {
            throw new UnsatisfiedLinkError("'int com.ibm.disni.verbs.impl.NativeDispatcher._getVersion()'");
        }, ONE_DEVICE, () -> true, () -> true, "/opt/disni");
        assertTrue(cause(probe).startsWith("libdisni on java.library.path does not match"));
    }

    @Test
    void noDeviceMentionsRdmaCoreAndIbvDevices() {
        VerbsProbe probe = new VerbsProbe(LOADS, MATCHES, List::of, () -> false, () -> true, "/opt/disni");
        String c = cause(probe);
        assertTrue(c.startsWith("libdisni loads, but this machine has no RDMA device"), c);
        assertTrue(c.contains("ibv_devices") && c.contains("rdma-core"), c);
        assertTrue(c.contains("provider=ucx"), c);
    }

    @Test
    void devicesWithoutRdmaCmSayWhichModule() {
        VerbsProbe probe = new VerbsProbe(LOADS, MATCHES, ONE_DEVICE, () -> false, () -> true, "/opt/disni");
        String c = cause(probe);
        assertTrue(c.contains("[mlx5_0]") && c.contains("modprobe rdma_ucm"), c);
    }

    @Test
    void hiddenDirectBufferNeedsTheExportFlagEvenWhenAllElseIsThere() {
        VerbsProbe probe = new VerbsProbe(LOADS, MATCHES, ONE_DEVICE, () -> true, () -> false, "/opt/disni");
        assertEquals(VerbsProbe.Messages.addExports(), cause(probe));
        assertTrue(cause(probe).contains("--add-exports java.base/sun.nio.ch=ALL-UNNAMED"));
    }

    @Test
    void bothProblemsAreReportedTogether() {
        VerbsProbe probe = new VerbsProbe(() -> {
            throw new UnsatisfiedLinkError("no disni in java.library.path: /a");
        }, MATCHES, ONE_DEVICE, () -> true, () -> false, "/a");
        String c = cause(probe);
        assertTrue(c.contains("not on java.library.path") && c.contains(" Also: DiSNI 2.1 reads"), c);
    }

    @Test
    void laterChecksAreNotRunOnceOneFailsAndTheAnswerIsComputedOnce() {
        AtomicInteger loads = new AtomicInteger();
        AtomicInteger versionChecks = new AtomicInteger();
        VerbsProbe probe = new VerbsProbe(() -> {
            loads.incrementAndGet();
            throw new UnsatisfiedLinkError("no disni in java.library.path: /a");
        }, versionChecks::incrementAndGet, ONE_DEVICE, () -> true, () -> true, "/a");
        String first = cause(probe);
        assertEquals(first, cause(probe));
        assertEquals(1, loads.get());
        assertEquals(0, versionChecks.get());
    }

    @Test
    void aThrowingCheckNeverEscapes() {
        VerbsProbe probe = new VerbsProbe(() -> {
            throw new IllegalStateException("boom");
        }, MATCHES, () -> {
            throw new IOException("unreadable");
        }, () -> {
            throw new SecurityException("denied");
        }, () -> {
            throw new SecurityException("denied");
        }, "/a");
        assertTrue(cause(probe).contains("boom"));
        VerbsProbe unreadable = new VerbsProbe(LOADS, MATCHES, () -> {
            throw new IOException("unreadable sysfs");
        }, () -> true, () -> true, "/a");
        assertTrue(cause(unreadable).contains("no RDMA device (java.io.IOException: unreadable sysfs)"));
    }

    @Test
    void sysfsListingOfThisMachine() throws IOException {
        List<String> devices = VerbsProbe.sysfsDevices();
        if (Files.isDirectory(VerbsProbe.SYSFS_DEVICES)) {
            try (var s = Files.list(VerbsProbe.SYSFS_DEVICES)) {
                assertEquals(s.count(), devices.size());
            }
        } else {
            assertEquals(List.of(), devices);
        }
    }
}
