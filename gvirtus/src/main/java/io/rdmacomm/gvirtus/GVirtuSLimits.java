package io.rdmacomm.gvirtus;

/**
 * Bounds on what a peer may make this side read, checked before anything is allocated, so a garbled or hostile
 * stream ends with a clear error instead of an {@link OutOfMemoryError} or a read that never ends. Immutable.
 *
 * <p>GVirtuS itself has none of these bounds on TCP (it reads a routine name until the NUL however long it is,
 * and allocates whatever length the peer announces); its {@code ib} communicator receives the name in one fixed
 * 30-byte message. The defaults here are far above what any CUDA routine name or ordinary call needs.
 */
public final class GVirtuSLimits {
    /** Routine names of up to 255 bytes (256 with the NUL); the longest CUDA API names are under 64. */
    public static final int DEFAULT_MAX_ROUTINE_NAME_BYTES = 256;
    /** 256 MiB of input per request and of output per reply. */
    public static final long DEFAULT_MAX_PAYLOAD_BYTES = 256L << 20;
    /** The defaults above. */
    public static final GVirtuSLimits DEFAULT = new GVirtuSLimits(DEFAULT_MAX_ROUTINE_NAME_BYTES,
            DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_MAX_PAYLOAD_BYTES);

    private final int maxRoutineNameBytes;
    private final long maxInputBytes;
    private final long maxOutputBytes;

    private GVirtuSLimits(int maxRoutineNameBytes, long maxInputBytes, long maxOutputBytes) {
        if (maxRoutineNameBytes < 2) {
            throw new IllegalArgumentException("maxRoutineNameBytes counts the NUL and must be at least 2, got "
                    + maxRoutineNameBytes);
        }
        checkPayload("maxInputBytes", maxInputBytes);
        checkPayload("maxOutputBytes", maxOutputBytes);
        this.maxRoutineNameBytes = maxRoutineNameBytes;
        this.maxInputBytes = maxInputBytes;
        this.maxOutputBytes = maxOutputBytes;
    }

    private static void checkPayload(String name, long value) {
        // a payload is held in one Java array
        if (value < 0 || value > GVirtuSBuffer.MAX_SIZE) {
            throw new IllegalArgumentException(name + " must be between 0 and " + GVirtuSBuffer.MAX_SIZE + ", got "
                    + value);
        }
    }

    /** The longest routine name accepted, in bytes, counting its terminating NUL. */
    public int maxRoutineNameBytes() {
        return maxRoutineNameBytes;
    }

    /** The largest request input accepted, in bytes. */
    public long maxInputBytes() {
        return maxInputBytes;
    }

    /** The largest reply output accepted, in bytes. */
    public long maxOutputBytes() {
        return maxOutputBytes;
    }

    public GVirtuSLimits withMaxRoutineNameBytes(int bytes) {
        return new GVirtuSLimits(bytes, maxInputBytes, maxOutputBytes);
    }

    public GVirtuSLimits withMaxInputBytes(long bytes) {
        return new GVirtuSLimits(maxRoutineNameBytes, bytes, maxOutputBytes);
    }

    public GVirtuSLimits withMaxOutputBytes(long bytes) {
        return new GVirtuSLimits(maxRoutineNameBytes, maxInputBytes, bytes);
    }

    @Override
    public String toString() {
        return "GVirtuSLimits[maxRoutineNameBytes=" + maxRoutineNameBytes + ", maxInputBytes=" + maxInputBytes
                + ", maxOutputBytes=" + maxOutputBytes + "]";
    }
}
