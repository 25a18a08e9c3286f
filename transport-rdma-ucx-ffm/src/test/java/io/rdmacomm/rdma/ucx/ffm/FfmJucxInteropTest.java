package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.rdma.RdmaCommunicator;
import io.rdmacomm.testkit.ChildJvm;
import io.rdmacomm.testkit.EchoPeerMain;
import io.rdmacomm.testkit.PeerSignals;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code provider=ucx} between JVMs of different JDKs: this JDK 22+ JVM on ucx-ffm, a JDK 17 child on ucx-jucx
 * ({@link EchoPeerMain}), each as client and as server. Echoes of sizes from 1 byte to several times the 64 KiB
 * ring, a get from and a put into the child's registered region. Skipped where no JDK 17 is installed.
 */
@Timeout(180)
class FfmJucxInteropTest {
    private static final String OPTIONS = "?provider=ucx&ringSize=64k&connectTimeout=30s&acceptTimeout=60s"
            + "&readTimeout=30s";
    private static final int[] SIZES = {1, 1000, 4096, 70_000, 300_000};
    @TempDir
    Path dir;
    private Process child;
    private PeerSignals signals;

    @AfterEach
    void stopChild() throws IOException {
        if (child != null && child.isAlive()) {
            child.destroyForcibly();
        }
        if (signals != null) {
            signals.close();
        }
    }

    @Test
    void ucxFfmClientAndUcxJucxServerOnJdk17() throws Exception {
        PeerSignals out = startChild("serve", "rdma://127.0.0.1:0" + OPTIONS);
        String serving = awaitLine(out, "SERVING ");
        try (Communicator c = Communicators.connect(serving.substring("SERVING ".length()))) {
            exchange(c, out);
        }
        awaitExit();
    }

    @Test
    void ucxJucxClientOnJdk17AndUcxFfmServer() throws Exception {
        try (Communicator server = Communicators.serve("rdma://127.0.0.1:0" + OPTIONS)) {
            PeerSignals out = startChild("connect", server.endpoint().toString());
            try (Communicator c = server.accept()) {
                awaitLine(out, "CONNECTED");
                exchange(c, out);
            }
        }
        awaitExit();
    }

    /** The child's class path: this one without the FFM modules (built for JDK 22+), plus the JUCX provider. */
    private PeerSignals startChild(String mode, String endpoint) throws Exception {
        Optional<Path> jdk17 = ChildJvm.installedJdk(17);
        assumeTrue(jdk17.isPresent(), "no JDK 17 under /usr/lib/jvm for the ucx-jucx peer (CI installs it)");
        List<String> classPath = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.contains("ucx-ffm")) {
                classPath.add(entry);
            }
        }
        for (String entry : System.getProperty("rdmacomm.test.jucxClassPath").split(File.pathSeparator)) {
            assertTrue(Files.exists(Path.of(entry)), entry + " missing: the JUCX provider must be built first");
            classPath.add(entry);
        }
        Path err = dir.resolve("child.err");
        signals = PeerSignals.listen();
        child = signals.start(ChildJvm.of(jdk17.get(), classPath, EchoPeerMain.class, List.of(mode, endpoint))
                .redirectError(err.toFile()));
        return signals;
    }

    private void exchange(Communicator c, PeerSignals childOut) throws Exception {
        assertEquals("ucx-ffm", ((RdmaCommunicator) c).providerName());
        assertEquals("PEER ucx-jucx 17", awaitLine(childOut, "PEER "));
        RegionDescriptor region = RegionDescriptor.fromBytes(EchoPeerMain.readFrame(c));
        for (int size : SIZES) {
            byte[] sent = new byte[size];
            for (int i = 0; i < size; i++) {
                sent[i] = (byte) (i * 31 + size);
            }
            c.write(ByteBuffer.allocate(4).putInt(size).flip());
            c.write(ByteBuffer.wrap(sent));
            c.sync();
            assertArrayEquals(sent, EchoPeerMain.readFrame(c), size + " bytes echoed");
        }
        ByteBuffer got = ByteBuffer.allocateDirect(EchoPeerMain.REGION);
        c.get(region, 0, got);
        byte[] expected = new byte[EchoPeerMain.REGION];
        for (int i = 0; i < expected.length; i++) {
            expected[i] = EchoPeerMain.pattern(i);
        }
        byte[] gotBytes = new byte[expected.length];
        got.flip().get(gotBytes);
        assertArrayEquals(expected, gotBytes, "get of the JDK 17 peer's region");
        byte[] put = new byte[10_000];
        Arrays.fill(put, (byte) 0x5a);
        c.put(ByteBuffer.allocateDirect(put.length).put(put).flip(), region, 5000);
        System.arraycopy(put, 0, expected, 5000, put.length);
        c.write(ByteBuffer.allocate(4).putInt(EchoPeerMain.SHOW_REGION).flip());
        c.sync();
        assertArrayEquals(expected, EchoPeerMain.readFrame(c), "the JDK 17 peer's region after our put");
        c.write(ByteBuffer.allocate(4).putInt(EchoPeerMain.BYE).flip());
        c.sync();
        assertEquals(-1, c.read(ByteBuffer.allocate(1)), "the JDK 17 peer ends the stream");
    }

    private String awaitLine(PeerSignals out, String prefix) throws Exception {
        String line = out.next(60);
        if (line == null || !line.startsWith(prefix)) {
            fail("expected '" + prefix + "...' from the JDK 17 peer, got " + line + "; its stderr:\n" + childErr());
        }
        return line;
    }

    private void awaitExit() throws Exception {
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the JDK 17 peer did not end after our close");
        assertEquals(0, child.exitValue(), "the JDK 17 peer's exit; its stderr:\n" + childErr());
    }

    private String childErr() throws Exception {
        Path err = dir.resolve("child.err");
        return Files.exists(err) ? Files.readString(err) : "";
    }
}
