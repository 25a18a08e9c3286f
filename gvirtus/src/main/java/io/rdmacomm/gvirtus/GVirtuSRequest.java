package io.rdmacomm.gvirtus;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * One GVirtuS request: the routine to run and its marshalled input.
 *
 * <pre>
 * offset    size  field
 * 0         n     routine name (UTF-8; GVirtuS names are ASCII)
 * n         1     NUL
 * n+1       8     input length L, u64 little-endian
 * n+9       L     input (see {@link GVirtuSBuffer})
 * </pre>
 *
 * Immutable, except that {@link #input()} is not copied.
 */
public final class GVirtuSRequest {
    private final String routine;
    private final byte[] routineBytes;
    private final byte[] input;

    /**
     * @param input the marshalled arguments; not copied
     * @throws IllegalArgumentException if the routine name contains a NUL, which would end it early on the wire
     */
    public GVirtuSRequest(String routine, byte[] input) {
        this.routine = Objects.requireNonNull(routine, "routine");
        this.input = Objects.requireNonNull(input, "input");
        if (routine.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a routine name cannot contain NUL: \"" + routine.replace("\0", "\\0")
                    + "\"");
        }
        this.routineBytes = routine.getBytes(StandardCharsets.UTF_8);
    }

    public String routine() {
        return routine;
    }

    /** The marshalled input; the array itself, not a copy. */
    public byte[] input() {
        return input;
    }

    /** Writes this request and syncs, so it is on its way to the peer when this returns. */
    public void writeTo(Communicator c) throws IOException {
        Wire.writeRequest(c, routineBytes, input);
    }

    /**
     * Reads the next request, or returns empty if the stream ended cleanly before its first byte.
     *
     * @throws java.io.EOFException if the stream ends inside a request; the message names the part and how many
     *     of its bytes arrived
     * @throws io.rdmacomm.api.CommunicatorException if the routine name has no NUL within
     *     {@link GVirtuSLimits#maxRoutineNameBytes()} or the input is longer than
     *     {@link GVirtuSLimits#maxInputBytes()}; the stream cannot be resynchronised after either
     */
    public static Optional<GVirtuSRequest> readFrom(Communicator c, GVirtuSLimits limits) throws IOException {
        return Wire.readRequest(c, limits);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GVirtuSRequest r && routine.equals(r.routine) && Arrays.equals(input, r.input);
    }

    @Override
    public int hashCode() {
        return 31 * routine.hashCode() + Arrays.hashCode(input);
    }

    @Override
    public String toString() {
        return "GVirtuSRequest[" + routine + ", " + input.length + " input bytes]";
    }
}
