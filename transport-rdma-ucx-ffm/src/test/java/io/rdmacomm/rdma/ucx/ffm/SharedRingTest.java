package io.rdmacomm.rdma.ucx.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared ring's checks on the writer's side: only the advertised, sealed memfd of this host and this user is
 * mapped, once, and nothing else a peer names is opened (pipes, terminals, other users' processes and files); a
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
    void statxReadsWhatTheFileApiReads(@TempDir Path dir) throws Exception {
        assumeTrue(SharedRing.hasStatx(), "this libc has no statx; the file API is used instead");
        Path file = Files.writeString(dir.resolve("plain"), "12345");
        Files.createLink(dir.resolve("second-name"), file);
        try (SharedRing owner = SharedRing.create(LENGTH)) {
            Path ring = Path.of("/proc/self/fd/" + SharedRing.parse(owner.advert(), LENGTH).fd());
            for (Path p : new Path[] {file, ring, Path.of("/proc/self"), Path.of("/dev/null")}) {
                SharedRing.FileStat viaStatx = SharedRing.statPath(p);
                SharedRing.FileStat viaFileApi = SharedRing.fileApiStat(p);
                assertEquals(viaFileApi.mode(), viaStatx.mode(), p + ": mode");
                assertEquals(viaFileApi.uid(), viaStatx.uid(), p + ": uid");
                assertEquals(viaFileApi.nlink(), viaStatx.nlink(), p + ": links");
                assertEquals(viaFileApi.size(), viaStatx.size(), p + ": size");
                assertEquals(viaFileApi.ino(), viaStatx.ino(), p + ": inode");
            }
            assertEquals(2, SharedRing.statPath(file).nlink());
            assertEquals(5, SharedRing.statPath(file).size());
            assertEquals(0, SharedRing.statPath(ring).nlink(), "a memfd has no name");
        }
        assertEquals(null, SharedRing.statPath(dir.resolve("absent")));
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
        refused(a -> ByteBuffer.wrap(a).putLong(16, gone), "no process");
    }

    /** A plain file can shrink under the writer (a fault at its next store): only a sealed memfd is mapped. */
    @Test
    void aDescriptorThatIsNotAMemfdIsRefused(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("not-a-ring");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(SharedRing.HEADER + LENGTH);
            int fd = descriptorOf(file);
            refused(a -> ByteBuffer.wrap(a).putInt(24, fd), "not a shared-ring memfd");
        }
    }

    /** A memfd of the ring's name and size but without the seals could shrink under the writer. */
    @Test
    void aMemfdWithoutTheSealsIsRefused() throws Exception {
        try (Memfd unsealed = new Memfd("rdmacomm-ring", SharedRing.HEADER + LENGTH, false)) {
            refused(a -> ByteBuffer.wrap(a).putInt(24, unsealed.fd), "not a memfd sealed");
        }
    }

    /** Pipes, terminals and devices are refused by what their descriptor names, before anything is opened. */
    @Test
    void aPipeOrATerminalIsRefusedUnopened() throws Exception {
        Process cat = new ProcessBuilder("cat").start();
        try {
            long pid = cat.pid();
            refused(a -> ByteBuffer.wrap(a).putLong(16, pid).putInt(24, 0), "not a shared-ring memfd");
        } finally {
            cat.destroyForcibly().waitFor();
        }
        try (RandomAccessFile ptmx = new RandomAccessFile("/dev/ptmx", "rw")) {
            int fd = descriptorOf(Path.of("/dev/ptmx").toRealPath());
            refused(a -> ByteBuffer.wrap(a).putInt(24, fd), "not a shared-ring memfd");
        } catch (java.io.FileNotFoundException noPtys) {
            // no pseudo-terminals in this container: the pipe above is the case
        }
    }

    /** A ring of this host that belongs to another user is not this side's to write, whatever its checks. */
    @Test
    void aMemfdOfAnotherUserIsRefused() throws Exception {
        try (Memfd other = new Memfd("rdmacomm-ring", SharedRing.HEADER + LENGTH, true)) {
            assumeTrue(other.chown(65_534), "changing a file's owner needs root");
            refused(a -> ByteBuffer.wrap(a).putInt(24, other.fd), "belongs to uid 65534");
        }
    }

    @Test
    void aProcessOfAnotherUserIsRefused() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")) && isRoot(), "needs root and setpriv");
        Process other = new ProcessBuilder("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                "cat").start();
        try {
            other.getOutputStream().write('x');
            other.getOutputStream().flush();
            assertEquals('x', other.getInputStream().read(), "the child runs as another user");
            long pid = other.pid();
            refused(a -> ByteBuffer.wrap(a).putLong(16, pid).putInt(24, 0), "belongs to uid 65534");
        } finally {
            other.destroyForcibly().waitFor();
        }
    }

    /**
     * An advert replayed from another connection names a ring whose writer has mapped it already: refused, and
     * the first writer's mapping goes on working.
     */
    @Test
    void aReplayedAdvertOfARingWithAWriterIsRefused() throws Exception {
        try (SharedRing owner = SharedRing.create(LENGTH);
                SharedRing writer = SharedRing.map(owner.advert(), LENGTH)) {
            SharedRing.Refused e = assertThrows(SharedRing.Refused.class,
                    () -> SharedRing.map(owner.advert(), LENGTH).close());
            assertTrue(e.getMessage().contains("already has its writer"), e.getMessage());
            writer.ring().putInt(8, 0xCAFE);
            assertEquals(0xCAFE, owner.ring().getInt(8));
        }
    }

    /**
     * Once its writer has claimed a ring, the owner's memfd is closed at the next ring's creation: both mappings go
     * on, nothing can open the ring any more (a replayed advert names a closed descriptor, or another ring whose
     * token differs), and a ring not claimed yet keeps its memfd for its writer.
     */
    @Test
    void aClaimedRingsDescriptorIsClosedAtTheNextCreationAndBothMappingsGoOn() throws Exception {
        try (SharedRing owner = SharedRing.create(LENGTH);
                SharedRing unclaimed = SharedRing.create(LENGTH);
                SharedRing writer = SharedRing.map(owner.advert(), LENGTH)) {
            assertTrue(owner.descriptorOpen(), "open until the next ring is made");
            try (SharedRing next = SharedRing.create(LENGTH)) {
                assertFalse(owner.descriptorOpen(), "the claimed ring's memfd");
                assertTrue(unclaimed.descriptorOpen(), "the unclaimed ring's memfd");
                assertTrue(next.descriptorOpen(), "the new ring's memfd");
                writer.ring().putInt(8, 0xBEEF);
                assertEquals(0xBEEF, owner.ring().getInt(8), "the writer's store reaches the owner");
                assertThrows(CommunicatorException.class, () -> SharedRing.map(owner.advert(), LENGTH).close(),
                        "a replay of the claimed ring's advert");
                try (SharedRing second = SharedRing.map(unclaimed.advert(), LENGTH)) {
                    second.ring().put(0, (byte) 7);
                    assertEquals(7, unclaimed.ring().get(0), "the unclaimed ring is still open to its writer");
                }
            }
        }
    }

    /**
     * Rings whose writer never comes (a peer on another host, or one that refused the ring) keep no descriptor for
     * long: past {@link SharedRing#MAX_UNCLAIMED} open offers the oldest is withdrawn, its memfd closed, and a writer
     * that comes after is refused (it writes as active messages); the newest offers stay open.
     */
    @Test
    void pastTheCapTheOldestUnclaimedRingsAreWithdrawn() throws Exception {
        List<SharedRing> rings = new ArrayList<>();
        try {
            for (int i = 0; i < SharedRing.MAX_UNCLAIMED + 8; i++) {
                rings.add(SharedRing.create(LENGTH));
                assertTrue(SharedRing.unclaimed() <= SharedRing.MAX_UNCLAIMED, SharedRing.unclaimed() + " open");
            }
            SharedRing oldest = rings.get(0);
            assertFalse(oldest.descriptorOpen(), "the oldest offer's memfd");
            assertThrows(CommunicatorException.class, () -> SharedRing.map(oldest.advert(), LENGTH).close(),
                    "a writer after the withdrawal");
            SharedRing newest = rings.get(rings.size() - 1);
            assertTrue(newest.descriptorOpen(), "the newest offer's memfd");
            try (SharedRing writer = SharedRing.map(newest.advert(), LENGTH)) {
                writer.ring().put(0, (byte) 9);
                assertEquals(9, newest.ring().get(0), "the newest ring is open to its writer");
            }
            long open = rings.stream().filter(SharedRing::descriptorOpen).count();
            assertTrue(open <= SharedRing.MAX_UNCLAIMED, open + " of " + rings.size() + " memfds open");
        } finally {
            for (SharedRing r : rings) {
                r.close();
            }
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

    private static boolean isRoot() throws Exception {
        return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
    }

    /** A memfd made here, optionally with a ring's seals, that a test's adverts point at. */
    static final class Memfd implements AutoCloseable {
        private static final Linker LINKER = Linker.nativeLinker();
        final int fd;

        Memfd(String name, long size, boolean sealed) throws Exception {
            try (Arena a = Arena.ofConfined()) {
                fd = call("memfd_create", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), a.allocateFrom(name),
                        3); // MFD_CLOEXEC | MFD_ALLOW_SEALING
            }
            assertTrue(fd >= 0, "memfd_create");
            try (RandomAccessFile f = new RandomAccessFile("/proc/self/fd/" + fd, "rw")) {
                f.setLength(size);
            }
            if (sealed) {
                // F_ADD_SEALS: F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW
                assertEquals(0, call("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), fd,
                        1033, 7));
            }
        }

        boolean chown(int uid) {
            try {
                Files.setAttribute(Path.of("/proc/self/fd/" + fd), "unix:uid", uid);
                return true;
            } catch (IOException | SecurityException e) {
                return false;
            }
        }

        @Override
        public void close() throws Exception {
            call("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), fd);
        }

        private static int call(String name, FunctionDescriptor d, Object... args) throws Exception {
            Linker.Option[] options = name.equals("fcntl") ? new Linker.Option[] {Linker.Option.firstVariadicArg(2)}
                    : new Linker.Option[0];
            MethodHandle h = LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), d, options);
            try {
                return (int) h.invokeWithArguments(args);
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
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
