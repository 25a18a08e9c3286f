package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.rdma.RdmaCommunicator;
import io.rdmacomm.testkit.ChildJvm;
import io.rdmacomm.testkit.EchoPeerMain;
import io.rdmacomm.testkit.PeerSignals;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Echoes through a second JVM ({@link EchoPeerMain}) over a 64 KiB ring, heap and direct buffers, writes of 1 byte to
 * many times the ring, and which path this side's writes took: into the peer's ring mapped here (shared memory) or
 * as active messages (UCX_TLS=tcp).
 */
@Timeout(120)
abstract class SharedRingStreamCase {
    private static final String OPTIONS = "&ringSize=64k&readTimeout=30s&acceptTimeout=60s";
    private static final int[] SIZES = {1, 1000, 4096, 65_536, 70_000, 300_000, 3_000_000};
    @TempDir
    Path dir;
    private Process child;
    private PeerSignals signals;

    /** Whether this environment's writes go into the peer's mapped ring. */
    abstract boolean mapped();

    /** Whether this environment is the one the subclass is for (UCX_TLS is read once per JVM). */
    abstract boolean inItsEnvironment();

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
    void echoesOfEverySizeComeBackWholeAndThePathIsTheTransportsOwn() throws Exception {
        assumeTrue(inItsEnvironment(), "UCX_TLS differs: the surefire execution for this transport runs it");
        Path err = dir.resolve("child.err");
        signals = PeerSignals.listen();
        child = signals.start(ChildJvm.of(EchoPeerMain.class, List.of("serve", FfmTestHooks.URI + OPTIONS))
                .redirectError(err.toFile()));
        String serving = signal("SERVING ", err);
        try (Communicator c = Communicators.connect(serving.substring("SERVING ".length()))) {
            signal("PEER ucx-ffm", err);
            EchoPeerMain.readFrame(c); // the peer's region descriptor
            assertEquals(mapped(), ((RdmaCommunicator) c).statistics().peerRingMapped(), "this side's write path");
            for (int size : SIZES) {
                for (boolean direct : new boolean[] {false, true}) {
                    byte[] sent = new byte[size];
                    for (int i = 0; i < size; i++) {
                        sent[i] = (byte) (i * 31 + size + (direct ? 1 : 0));
                    }
                    ByteBuffer src = direct ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
                    src.put(sent).flip();
                    c.write(ByteBuffer.allocate(4).putInt(size).flip());
                    c.write(src);
                    c.sync();
                    assertArrayEquals(sent, EchoPeerMain.readFrame(c), size + " bytes echoed, " + (direct ? "direct" : "heap"));
                }
            }
            c.write(ByteBuffer.allocate(4).putInt(EchoPeerMain.BYE).flip());
            c.sync();
            assertEquals(-1, c.read(ByteBuffer.allocate(1)), "the peer ends the stream");
        }
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the peer did not end after our close");
        assertEquals(0, child.exitValue(), "the peer's exit; its stderr:\n" + Files.readString(err));
    }

    private String signal(String prefix, Path err) throws Exception {
        String line = signals.next(60);
        if (line == null || !line.startsWith(prefix)) {
            fail("expected '" + prefix + "...' from the peer, got " + line + "; its stderr:\n"
                    + (Files.exists(err) ? Files.readString(err) : ""));
        }
        return line;
    }
}
