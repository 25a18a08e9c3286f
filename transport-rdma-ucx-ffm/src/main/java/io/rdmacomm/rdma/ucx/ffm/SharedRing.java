package io.rdmacomm.rdma.ucx.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A receive ring in shared memory that the writer on the same host maps and copies into itself, where UCX would
 * otherwise move each chunk with a rendezvous the owner checks and places (one-sided access is withheld on shared
 * memory: see transport-rdma's README, "Remote memory"). The owner's bounds are the mapping's: a writer reaches
 * this ring and nothing else of the owner's memory, whatever it sends.
 *
 * <p>The owner creates a sealed memfd ({@code memfd_create}, {@code F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL}, so
 * neither side can change its size and no access ever faults past its end) of one header page and the ring, maps
 * it, writes a random token into the header and advertises {@link #advert()}: its pid, the descriptor, the size,
 * the host's boot id and the token.
 *
 * <p>The advert comes from the peer, so the writer ({@link #map(byte[], int)}) opens nothing it names before the
 * kernel confirms it: the boot id is its own; the process is of its own uid; the descriptor's {@code /proc} link
 * names a memfd of the ring's name; the file, pinned with {@code O_PATH} (no driver's open runs), is regular, of its
 * own uid, unlinked and of the advertised size. The descriptor that maps is opened from the pinned file
 * ({@code O_NOCTTY | O_NONBLOCK | O_CLOEXEC}) and must carry the three seals; the mapped header must hold the token,
 * and the writer claims the ring by a compare-and-set of a header word ({@link #CLAIM_OFFSET}), so each ring has one
 * writer for its life and an advert replayed from another connection is refused. A refusal is a {@link Refused};
 * the caller falls back to active messages. UCX does not tell which process is at an endpoint's other end, so the
 * binding is to the token (a capability the owner gave its connection's peer) and the claim, not to the peer's pid:
 * docs/security.md, "Stream rings on shared memory".
 *
 * <p>Both sides' mappings live in a shared {@link Arena}: closing it while another thread copies makes that copy
 * fail with {@link IllegalStateException} instead of touching unmapped memory.
 */
final class SharedRing implements AutoCloseable {
    static final int HEADER = 4096;
    /** Where the header page keeps the engine's control words (after magic and token), and their room. */
    static final int CONTROL_OFFSET = 512;
    static final int CONTROL_LENGTH = 512;
    /** Advert: u64 0 · u32 magic · u32 version · u64 pid · u32 fd · u64 size · 16 B boot id · 16 B token. */
    static final int ADVERT_LENGTH = 8 + 4 + 4 + 8 + 4 + 8 + 16 + 16;
    private static final int MAGIC = 0x5253484D; // "RSHM"
    private static final int VERSION = 1;
    private static final String NAME = "rdmacomm-ring";

    private static final int MFD_CLOEXEC = 1;
    private static final int MFD_ALLOW_SEALING = 2;
    private static final int F_ADD_SEALS = 1033;
    private static final int F_GET_SEALS = 1034;
    private static final int F_SEAL_SEAL = 1;
    private static final int F_SEAL_SHRINK = 2;
    private static final int F_SEAL_GROW = 4;
    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;
    private static final int O_NOCTTY = 0x100;
    private static final int O_NONBLOCK = 0x800;
    private static final int O_PATH = 0x200000;
    private static final int S_IFMT = 0170000;
    private static final int S_IFREG = 0100000;
    private static final int REQUIRED_SEALS = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    /** What {@code /proc/<pid>/fd/<fd>} of a ring reads: the name {@link #create} gives its memfd. */
    private static final String MEMFD_LINK = "/memfd:" + NAME + " ";
    /** Where the header keeps the writer's claim: 0 until the first writer maps the ring, which sets it to 1. */
    static final int CLAIM_OFFSET = 64;
    private static final VarHandle CLAIM = JAVA_LONG.varHandle();
    private static final int PROT_READ_WRITE = 3;
    private static final int MAP_SHARED = 1;
    private static final int SEEK_END = 2;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final ValueLayout.OfInt INT = JAVA_INT;
    private static final MethodHandle MEMFD_CREATE = libc("memfd_create", FunctionDescriptor.of(INT, ADDRESS, INT));
    private static final MethodHandle FTRUNCATE = libc("ftruncate", FunctionDescriptor.of(INT, INT, JAVA_LONG));
    private static final MethodHandle FCNTL_GET = libc("fcntl", FunctionDescriptor.of(INT, INT, INT),
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle FCNTL_ADD = libc("fcntl", FunctionDescriptor.of(INT, INT, INT, INT),
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle OPEN = libc("open", FunctionDescriptor.of(INT, ADDRESS, INT),
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle GETEUID = libc("geteuid", FunctionDescriptor.of(INT));
    private static final MethodHandle CLOSE = libc("close", FunctionDescriptor.of(INT, INT));
    private static final MethodHandle LSEEK = libc("lseek", FunctionDescriptor.of(JAVA_LONG, INT, JAVA_LONG, INT));
    private static final MethodHandle MMAP = libc("mmap", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            INT, INT, INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = libc("munmap", FunctionDescriptor.of(INT, JAVA_LONG, JAVA_LONG));
    /** statx (glibc 2.28 and later; its struct is the same on every architecture), or null: then the file API. */
    private static final MethodHandle STATX = LIBC.find("statx").map(f -> LINKER.downcallHandle(f,
            FunctionDescriptor.of(INT, INT, ADDRESS, INT, INT, ADDRESS))).orElse(null);
    private static final int AT_FDCWD = -100;
    private static final int AT_EMPTY_PATH = 0x1000;
    private static final int STATX_BASIC_STATS = 0x7ff;
    private static final int STATX_LENGTH = 256;
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Owner rings whose memfd is open for a writer that has not claimed them yet ({@link #releaseClaimed}). */
    private static final ConcurrentLinkedQueue<SharedRing> UNCLAIMED = new ConcurrentLinkedQueue<>();
    /** The rings in {@link #UNCLAIMED}. */
    private static final AtomicInteger UNCLAIMED_COUNT = new AtomicInteger();
    /**
     * The most owner rings whose memfd stays open for a writer to claim: past it the oldest offer is withdrawn (its
     * memfd closed), so a peer that never claims its ring (on another host, or one that refused it) holds no
     * descriptor, and the process's descriptors for rings are bounded. A writer that comes after the withdrawal is
     * refused and writes as active messages.
     */
    static final int MAX_UNCLAIMED = 64;
    private static final byte[] BOOT_ID = bootId();
    /** {@code -Dio.rdmacomm.ucx.sharedRings=false} turns shared rings off (to compare with the active messages). */
    private static final boolean ENABLED = !"false".equals(System.getProperty("io.rdmacomm.ucx.sharedRings"));

    private final Arena arena;
    private final MemorySegment mapping;
    private final ByteBuffer ring;
    private final ByteBuffer control;
    private final byte[] advert;
    /**
     * The owner's memfd, open for the writer to open until it has claimed the ring (then closed by
     * {@link #releaseClaimed}); -1 on the writer's side and once closed.
     */
    private final AtomicInteger fd;

    private SharedRing(Arena arena, MemorySegment mapping, int fd, byte[] advert) {
        this.arena = arena;
        this.mapping = mapping;
        this.fd = new AtomicInteger(fd);
        this.advert = advert;
        this.ring = mapping.asSlice(HEADER).asByteBuffer();
        this.control = mapping.asSlice(CONTROL_OFFSET, CONTROL_LENGTH).asByteBuffer();
    }

    private static MethodHandle libc(String name, FunctionDescriptor fd, Linker.Option... options) {
        return LINKER.downcallHandle(LIBC.find(name).orElseThrow(
                () -> new UnsatisfiedLinkError("libc has no " + name)), fd, options);
    }

    /**
     * Whether this process offers shared rings: Linux with a boot id, and UCX may use shared memory
     * ({@code UCX_TLS}).
     */
    static boolean offered(boolean sharedMemoryAllowed) {
        return BOOT_ID != null && sharedMemoryAllowed && ENABLED;
    }

    /** The owner's side: a sealed memfd of {@link #HEADER} plus {@code length} bytes, mapped, with a fresh token. */
    static SharedRing create(int length) throws IOException {
        releaseClaimed();
        long size = HEADER + (long) length;
        int fd;
        try (Arena scratch = Arena.ofConfined()) {
            fd = memfdCreate(scratch.allocateFrom(NAME), MFD_CLOEXEC | MFD_ALLOW_SEALING);
        }
        if (fd < 0) {
            throw new CommunicatorException("memfd_create failed for a " + length + " byte shared ring");
        }
        boolean done = false;
        try {
            if (ftruncate(fd, size) != 0
                    || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
                throw new CommunicatorException("could not size and seal a " + length + " byte shared ring");
            }
            Arena arena = Arena.ofShared();
            MemorySegment mapping = map(fd, size, arena);
            byte[] token = new byte[16];
            RANDOM.nextBytes(token);
            mapping.set(JAVA_INT, 0, MAGIC);
            MemorySegment.copy(MemorySegment.ofArray(token), 0, mapping, 4, 16);
            byte[] advert = new Advert(ProcessHandle.current().pid(), fd, size, BOOT_ID, token).encode();
            done = true;
            SharedRing ring = new SharedRing(arena, mapping, fd, advert);
            withdrawOldest(MAX_UNCLAIMED - 1);
            UNCLAIMED.add(ring);
            UNCLAIMED_COUNT.incrementAndGet();
            return ring;
        } finally {
            if (!done) {
                closeFd(fd);
            }
        }
    }

    /**
     * The fields of a well-formed advert of a {@code length} byte ring on this host: nothing is opened or mapped.
     *
     * @throws CommunicatorException naming why not (malformed, another host, a size that does not fit)
     */
    static Advert parse(byte[] advert, int length) throws CommunicatorException {
        if (advert.length != ADVERT_LENGTH) {
            throw new CommunicatorException("not a shared-ring advert (" + advert.length + " bytes)");
        }
        ByteBuffer a = ByteBuffer.wrap(advert);
        long empty = a.getLong();
        int magic = a.getInt();
        int version = a.getInt();
        long pid = a.getLong();
        int fd = a.getInt();
        long size = a.getLong();
        byte[] boot = new byte[16];
        byte[] token = new byte[16];
        a.get(boot).get(token);
        if (empty != 0 || magic != MAGIC || version != VERSION) {
            throw new CommunicatorException("not a shared-ring advert (magic or version)");
        }
        if (BOOT_ID == null || !Arrays.equals(boot, BOOT_ID)) {
            throw new CommunicatorException("the ring is on another host (boot id " + HexFormat.of().formatHex(boot)
                    + ")");
        }
        if (length < 0 || size != HEADER + (long) length || pid <= 0 || pid > Integer.MAX_VALUE || fd < 0) {
            throw new CommunicatorException("shared-ring advert of " + size + " bytes, pid " + pid + ", fd " + fd
                    + " does not fit a " + length + " byte ring");
        }
        return new Advert(pid, fd, size, boot, token);
    }

    /**
     * The writer's side: maps the ring of {@code length} bytes that {@code advert} names, if it is a ring this side
     * may write: see the class comment for the checks, all made before anything is mapped and those on the named
     * file before it is opened.
     *
     * @throws Refused where the advert names something other than an unclaimed ring of this user (a peer's advert
     *         replayed from another connection, another user's process or file, a descriptor that is no ring)
     * @throws CommunicatorException naming why not otherwise (another host, a malformed advert, the process gone)
     */
    static SharedRing map(byte[] advert, int length) throws IOException {
        Advert a = parse(advert, length);
        long me = geteuid();
        Path process = Path.of("/proc", Long.toString(a.pid()));
        FileStat owner = statPath(process);
        if (owner == null) {
            throw new CommunicatorException("no process " + a.pid() + " (gone, or hidden from this one)");
        }
        if (owner.uid() != me) {
            throw new Refused("process " + a.pid() + " belongs to uid " + owner.uid() + ", not to " + me
                    + " (rings are shared between processes of one user only)");
        }
        String named = "/proc/" + a.pid() + "/fd/" + a.fd();
        try {
            if (!Files.readSymbolicLink(Path.of(named)).toString().startsWith(MEMFD_LINK)) {
                throw new Refused(named + " is not a shared-ring memfd");
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof Refused r) {
                throw r;
            }
            throw new CommunicatorException("no " + named + " (closed, or the process is gone)");
        }
        // O_PATH pins the file without opening it (no driver's open runs, whatever it is); the checks are on that
        // file, and the descriptor that maps is opened from it, so a descriptor number reused meanwhile changes
        // nothing
        int path = open(named, O_PATH | O_CLOEXEC);
        if (path < 0) {
            throw new CommunicatorException("cannot open " + named + " (closed, or the process is gone)");
        }
        FileStat pinned;
        int mine;
        try {
            pinned = stat(path, named);
            checkRingFile(named, pinned, a.size(), me);
            mine = open("/proc/self/fd/" + path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        } finally {
            closeFd(path);
        }
        if (mine < 0) {
            throw new CommunicatorException("cannot open " + named + " for writing");
        }
        try {
            FileStat opened = stat(mine, named);
            if (opened.dev() != pinned.dev() || opened.ino() != pinned.ino()) {
                throw new Refused(named + " changed between its check and its opening");
            }
            long seals = fcntl(mine, F_GET_SEALS);
            if (seals < 0 || (seals & REQUIRED_SEALS) != REQUIRED_SEALS) {
                throw new Refused(named + " is not a memfd sealed against resizing");
            }
            long actual = lseek(mine, 0L, SEEK_END);
            if (actual != a.size()) {
                throw new Refused(named + " has " + actual + " bytes, not " + a.size());
            }
            Arena arena = Arena.ofShared();
            MemorySegment mapping = map(mine, a.size(), arena);
            if (mapping.get(JAVA_INT, 0) != MAGIC
                    || MemorySegment.mismatch(mapping, 4, 20, MemorySegment.ofArray(a.token()), 0, 16) != -1) {
                arena.close();
                throw new Refused(named + " is not the advertised ring (token differs)");
            }
            if (!CLAIM.compareAndSet(mapping, (long) CLAIM_OFFSET, 0L, 1L)) {
                arena.close();
                throw new Refused("the ring " + named
                        + " already has its writer (an advert replayed from another connection)");
            }
            return new SharedRing(arena, mapping, -1, advert);
        } finally {
            closeFd(mine);
        }
    }

    private static int open(String path, int flags) {
        try (Arena scratch = Arena.ofConfined()) {
            return open(scratch.allocateFrom(path), flags);
        }
    }

    /** What the checks read of a file: its type and permission bits, owner, links, size and identity. */
    record FileStat(int mode, long uid, long nlink, long size, long dev, long ino) {
    }

    /** The file an open descriptor of this process refers to. */
    private static FileStat stat(int fd, String named) throws CommunicatorException {
        FileStat st = STATX == null ? fileApiStat(Path.of("/proc/self/fd/" + fd)) : statx(fd, "", AT_EMPTY_PATH);
        if (st == null) {
            throw new CommunicatorException("cannot stat the descriptor opened from " + named);
        }
        return st;
    }

    /** The file at {@code path} (following links), or null if it cannot be read. */
    static FileStat statPath(Path path) {
        return STATX == null ? fileApiStat(path) : statx(AT_FDCWD, path.toString(), 0);
    }

    static boolean hasStatx() {
        return STATX != null;
    }

    private static FileStat statx(int dirFd, String path, int flags) {
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment buf = scratch.allocate(STATX_LENGTH, 8);
            int rc = (int) STATX.invokeExact(dirFd, scratch.allocateFrom(path), flags, STATX_BASIC_STATS, buf);
            if (rc != 0) {
                return null;
            }
            long dev = ((long) buf.get(JAVA_INT, 136) << 32) | (buf.get(JAVA_INT, 140) & 0xffffffffL);
            return new FileStat(Short.toUnsignedInt(buf.get(ValueLayout.JAVA_SHORT, 28)),
                    Integer.toUnsignedLong(buf.get(JAVA_INT, 20)), Integer.toUnsignedLong(buf.get(JAVA_INT, 16)),
                    buf.get(JAVA_LONG, 40), dev, buf.get(JAVA_LONG, 32));
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    /** {@link #statPath} through the file API: where libc has no statx, and to check statx's reading against. */
    static FileStat fileApiStat(Path path) {
        try {
            Map<String, Object> a = Files.readAttributes(path, "unix:*");
            return new FileStat(((Number) a.get("mode")).intValue(), ((Number) a.get("uid")).longValue(),
                    ((Number) a.get("nlink")).longValue(), ((Number) a.get("size")).longValue(),
                    ((Number) a.get("dev")).longValue(), ((Number) a.get("ino")).longValue());
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Refuses the file the advert names (its attributes through a descriptor of this process) unless it can be a
     * ring: a regular file of this user, unlinked (as a memfd is), of the advertised size.
     */
    private static void checkRingFile(String named, FileStat stat, long size, long me) throws Refused {
        if ((stat.mode() & S_IFMT) != S_IFREG) {
            throw new Refused(named + " is not a regular file (mode " + Integer.toOctalString(stat.mode()) + ")");
        }
        if (stat.uid() != me) {
            throw new Refused(named + " belongs to uid " + stat.uid() + ", not to " + me);
        }
        if (stat.nlink() != 0) {
            throw new Refused(named + " has a name in a file system: not a memfd");
        }
        if (stat.size() != size) {
            throw new Refused(named + " has " + stat.size() + " bytes, not " + size);
        }
    }

    /** The ring: {@link #HEADER} bytes into the mapping. Invalid once closed. */
    ByteBuffer ring() {
        return ring;
    }

    /** The engine's control words, shared by owner and writer: {@link #CONTROL_LENGTH} bytes of the header page. */
    ByteBuffer control() {
        return control;
    }

    /** The owner's advert, for its ring's descriptor. */
    byte[] advert() {
        return advert.clone();
    }

    /** Whether {@code key} has an advert's shape (leading zero md map and magic): the peer offers its ring. */
    static boolean isAdvert(byte[] key) {
        return key.length == ADVERT_LENGTH && ByteBuffer.wrap(key).getLong(0) == 0
                && ByteBuffer.wrap(key).getInt(8) == MAGIC;
    }

    /**
     * Stores into the ring before this call are visible to the reader before the notification sent after it (x86
     * orders stores anyway; weaker memory models need the fence).
     */
    static void publish() {
        VarHandle.storeStoreFence();
    }

    /** Unmaps (and on the owner's side closes the memfd if still open); a copy racing this fails rather than faulting. */
    @Override
    public void close() {
        try {
            arena.close();
        } catch (IllegalStateException alreadyClosed) {
            // closed before
        }
        int f = fd.getAndSet(-1);
        if (f >= 0) {
            closeFd(f);
        }
    }

    /**
     * Closes the memfds of this process's owner rings that their writers have claimed, and forgets rings closed
     * meanwhile; the rings not claimed yet keep their place (oldest first). A claimed ring needs no descriptor: both
     * sides keep their mappings, and no one else may open it any more, so a connection on shared memory holds no
     * descriptor for its ring once set up. Called at each ring's creation, so the rings of the last connections set
     * up keep theirs until the next one; the queue holds at most {@link #MAX_UNCLAIMED}, so a pass is short.
     */
    static void releaseClaimed() {
        for (SharedRing r : UNCLAIMED) {
            if (r.releaseIfClaimed() && UNCLAIMED.remove(r)) {
                UNCLAIMED_COUNT.decrementAndGet();
            }
        }
    }

    /** Withdraws the oldest offers (closes their memfds) until at most {@code keep} rings are unclaimed. */
    private static void withdrawOldest(int keep) {
        while (UNCLAIMED_COUNT.get() > keep) {
            SharedRing r = UNCLAIMED.poll();
            if (r == null) {
                return;
            }
            UNCLAIMED_COUNT.decrementAndGet();
            r.closeDescriptor();
        }
    }

    /** Owner rings whose memfd is open for a writer not seen yet (for tests). */
    static int unclaimed() {
        return UNCLAIMED_COUNT.get();
    }

    /** Whether this owner ring needs no more looking at: its memfd closed now (claimed) or before (closed). */
    private boolean releaseIfClaimed() {
        int f = fd.get();
        if (f < 0) {
            return true;
        }
        long claim;
        try {
            claim = (long) CLAIM.getVolatile(mapping, (long) CLAIM_OFFSET);
        } catch (IllegalStateException closed) {
            return true; // unmapped meanwhile: its close closes the memfd
        }
        if (claim == 0) {
            return false;
        }
        if (fd.compareAndSet(f, -1)) {
            closeFd(f);
        }
        return true;
    }

    /** Closes the owner's memfd if it is still open: no writer can open the ring from now on. */
    private void closeDescriptor() {
        int f = fd.getAndSet(-1);
        if (f >= 0) {
            closeFd(f);
        }
    }

    /** Whether the owner's memfd is still open (for tests). */
    boolean descriptorOpen() {
        return fd.get() >= 0;
    }

    private static MemorySegment map(int fd, long size, Arena arena) throws IOException {
        long address = mmap(size, fd);
        if (address == -1L || address == 0L) {
            throw new CommunicatorException("mmap of a " + size + " byte shared ring failed");
        }
        return MemorySegment.ofAddress(address).reinterpret(size, arena, s -> munmap(address, size));
    }

    private static void closeFd(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    // The libc calls of this class (ring creation, mapping and teardown only, never the data path), each through
    // invokeExact: invokeWithArguments spread and boxed its arguments and, run once per connection, kept the JIT busy

    private static int memfdCreate(MemorySegment name, int flags) {
        try {
            return (int) MEMFD_CREATE.invokeExact(name, flags);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    private static int ftruncate(int fd, long size) {
        try {
            return (int) FTRUNCATE.invokeExact(fd, size);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    private static int fcntl(int fd, int command) {
        try {
            return (int) FCNTL_GET.invokeExact(fd, command);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    private static int fcntl(int fd, int command, int argument) {
        try {
            return (int) FCNTL_ADD.invokeExact(fd, command, argument);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    private static int open(MemorySegment path, int flags) {
        try {
            return (int) OPEN.invokeExact(path, flags);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    private static int geteuid() {
        try {
            return (int) GETEUID.invokeExact();
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    private static long lseek(int fd, long offset, int whence) {
        try {
            return (long) LSEEK.invokeExact(fd, offset, whence);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    private static long mmap(long size, int fd) {
        try {
            return (long) MMAP.invokeExact(0L, size, PROT_READ_WRITE, MAP_SHARED, fd, 0L);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    private static void munmap(long address, long size) {
        try {
            int ignored = (int) MUNMAP.invokeExact(address, size);
        } catch (Throwable t) {
            throw rethrown(t);
        }
    }

    /** A downcall's failure: its own unchecked exception or error, anything else (it declares none) wrapped. */
    private static RuntimeException rethrown(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("libc call failed", t);
    }

    private static byte[] bootId() {
        try {
            String s = Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII).trim()
                    .replace("-", "");
            byte[] id = HexFormat.of().parseHex(s);
            return id.length == 16 ? id : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The fields of an advert ({@link #parse}); {@link #encode} gives its bytes back. */
    record Advert(long pid, int fd, long size, byte[] boot, byte[] token) {
        byte[] encode() {
            return ByteBuffer.allocate(ADVERT_LENGTH).putLong(0).putInt(MAGIC).putInt(VERSION).putLong(pid).putInt(fd)
                    .putLong(size).put(boot).put(token).array();
        }
    }

    /**
     * A well-formed advert of this host that names something this side must not write: another user's process or
     * file, a descriptor that is no sealed ring, a ring whose token differs or that already has its writer.
     */
    static final class Refused extends CommunicatorException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }
}
