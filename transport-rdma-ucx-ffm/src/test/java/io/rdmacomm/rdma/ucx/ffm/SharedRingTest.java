package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.CommunicatorException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared ring's checks on the writer's side: only the advertised, sealed memfd of this host is mapped, and a
 * closed mapping fails a copy instead of faulting. Both sides in this process ({@code /proc/self}); the engine's use
 * across processes is {@link FfmSharedRingStreamTest}.
 */
@Timeout(30)
class SharedRingTest {
    private static final int LENGTH = 64 * 1024;

    @Test
    void theWritersStoresLandInTheOwnersRing() throws Exception {
        try (SharedRing owner = SharedRing.create(LENGTH);
                SharedRing writer = SharedRing.map(owner.advert(), LENGTH)) {
            assertEquals(LENGTH, writer.ring().capacity());
            writer.ring().putLong(LENGTH - 8, 0x0123_4567_89AB_CDEFL);
            writer.ring().put(0, (byte) 42);
            assertEquals(0x0123_4567_89AB_CDEFL, owner.ring().getLong(LENGTH - 8));
            assertEquals(42, owner.ring().get(0));
        }
    }

    @Test
    void anAdvertIsRecognisedByItsShape() throws Exception {
        try (SharedRing owner = SharedRing.create(LENGTH)) {
            assertTrue(SharedRing.isAdvert(owner.advert()));
        }
        assertFalse(SharedRing.isAdvert(new byte[0]));
        assertFalse(SharedRing.isAdvert(new byte[SharedRing.ADVERT_LENGTH]), "zeros carry no magic");
    }

    @Test
    void aTokenThatDiffersIsRefused() throws Exception {
        refused(a -> a[a.length - 1] ^= 1, "token differs");
    }

    @Test
    void anotherHostsBootIdIsRefused() throws Exception {
        refused(a -> a[36] ^= 1, "another host");
    }

    @Test
    void aBadMagicOrVersionIsRefused() throws Exception {
        refused(a -> a[8] ^= 1, "not a shared-ring advert");
        refused(a -> a[15] ^= 1, "not a shared-ring advert");
    }

    @Test
    void anAdvertOfTheWrongLengthIsRefused() throws Exception {
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> SharedRing.map(new byte[SharedRing.ADVERT_LENGTH - 1], LENGTH));
        assertTrue(e.getMessage().contains("not a shared-ring advert"), e.getMessage());
    }

    @Test
    void aRingOfAnotherSizeThanTheDescriptorSaysIsRefused() throws Exception {
        try (SharedRing owner = SharedRing.create(LENGTH)) {
            CommunicatorException e = assertThrows(CommunicatorException.class,
                    () -> SharedRing.map(owner.advert(), 2 * LENGTH));
            assertTrue(e.getMessage().contains("does not fit"), e.getMessage());
        }
    }

    @Test
    void aGoneProcessIsRefused() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        long gone = p.pid();
        refused(a -> ByteBuffer.wrap(a).putLong(16, gone), "cannot open");
    }

    /** A plain file can shrink under the writer (a fault at its next store): only a sealed memfd is mapped. */
    @Test
    void aDescriptorThatIsNotASealedMemfdIsRefused(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("not-a-ring");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(SharedRing.HEADER + LENGTH);
            int fd = descriptorOf(file);
            refused(a -> ByteBuffer.wrap(a).putInt(24, fd), "not a memfd sealed");
        }
    }

    @Test
    void aCopyIntoAClosedMappingFailsInsteadOfFaulting() throws Exception {
        try (SharedRing owner = SharedRing.create(LENGTH)) {
            SharedRing writer = SharedRing.map(owner.advert(), LENGTH);
            ByteBuffer ring = writer.ring();
            writer.close();
            assertThrows(IllegalStateException.class, () -> ring.put(0, ByteBuffer.allocateDirect(16), 0, 16));
            writer.close();
        }
    }

    private static void refused(Consumer<byte[]> tamper, String reason) throws Exception {
        try (SharedRing owner = SharedRing.create(LENGTH)) {
            byte[] advert = owner.advert();
            tamper.accept(advert);
            CommunicatorException e = assertThrows(CommunicatorException.class, () -> SharedRing.map(advert, LENGTH));
            assertTrue(e.getMessage().contains(reason), e.getMessage());
        }
    }

    private static int descriptorOf(Path file) throws Exception {
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    if (Files.readSymbolicLink(fd).equals(file)) {
                        return Integer.parseInt(fd.getFileName().toString());
                    }
                } catch (java.io.IOException gone) {
                    // the listing's own descriptor
                }
            }
        }
        throw new AssertionError("no descriptor of " + file + " in /proc/self/fd");
    }
}
