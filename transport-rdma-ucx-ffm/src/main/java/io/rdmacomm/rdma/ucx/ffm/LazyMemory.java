package io.rdmacomm.rdma.ucx.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;

/**
 * Memory that costs nothing until it is written: a private anonymous mapping, whose pages the kernel provides (zeroed)
 * on first touch, for receive rings and send staging buffers that UCX does not map (one-sided access withheld, as on
 * {@code UCX_TLS=tcp}). An idle connection so holds no resident ring; a ring grows to its full size in the process's
 * memory only as data passes through it. {@code ByteBuffer.allocateDirect} zeroes every byte at once, which made each
 * idle connection resident at ring + staging (4 MiB at the default ringSize) and counted it against the JVM's
 * direct memory limit. The mapping belongs to an automatic arena: it is unmapped once no buffer over it is reachable,
 * so no access can outlive it.
 */
final class LazyMemory {
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final long MAP_FAILED = -1L;
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;

    static {
        Linker linker = Linker.nativeLinker();
        MMAP = linker.downcallHandle(linker.defaultLookup().find("mmap").orElseThrow(),
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
        MUNMAP = linker.downcallHandle(linker.defaultLookup().find("munmap").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    }

    private LazyMemory() {
    }

    /** A zeroed buffer of {@code length} bytes whose pages become resident as they are first written. */
    static ByteBuffer allocate(int length) throws IOException {
        if (length <= 0) {
            throw new IllegalArgumentException("a mapping of " + length + " bytes");
        }
        MemorySegment p;
        try {
            p = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, (long) length, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS, -1, 0L);
        } catch (Throwable e) {
            throw new IOException("mmap of " + length + " bytes failed: " + e, e);
        }
        long address = p.address();
        if (address == MAP_FAILED || address == 0) {
            throw new IOException("mmap of " + length + " bytes failed (out of address space or memory)");
        }
        return p.reinterpret(length, Arena.ofAuto(), s -> unmap(address, length)).asByteBuffer();
    }

    private static void unmap(long address, long length) {
        try {
            int rc = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), length);
            assert rc == 0 : "munmap failed";
        } catch (Throwable e) {
            // nothing to do in a cleaner: the mapping stays (address space only; its pages were given back with it)
        }
    }
}
