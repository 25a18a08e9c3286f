package io.rdmacomm.gvirtus;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;

/**
 * The outcome of one routine, as GVirtuS's {@code Result} sends it back: an exit code (0 is success; for CUDA
 * routines the {@code cudaError_t}), the seconds the backend spent in the routine, and the marshalled output.
 *
 * <pre>
 * offset  size  field
 * 0       4     exit code, i32 little-endian
 * 4       8     elapsed seconds, f64 little-endian
 * 12      8     output length L, u64 little-endian
 * 20      L     output (see {@link GVirtuSBuffer})
 * </pre>
 *
 * Immutable, except that {@link #output()} is not copied.
 */
public final class GVirtuSResult {
    /** What a GVirtuS backend answers for a routine it does not know, with an empty output and 0 seconds. */
    public static final int EXIT_UNKNOWN_ROUTINE = -1;
    /**
     * What {@link GVirtuSBackend} answers when a routine threw or returned nothing (GVirtuS has no code for it:
     * an exception there ends the backend process). Negative so it cannot be mistaken for a CUDA error.
     */
    public static final int EXIT_ROUTINE_FAILED = -2;

    private static final byte[] EMPTY = new byte[0];

    private final int exitCode;
    private final double elapsedSeconds;
    private final byte[] output;

    /** @param output the marshalled output; not copied */
    public GVirtuSResult(int exitCode, double elapsedSeconds, byte[] output) {
        this.exitCode = exitCode;
        this.elapsedSeconds = elapsedSeconds;
        this.output = Objects.requireNonNull(output, "output");
    }

    /** Exit code 0 with this output; the backend fills in the elapsed time. */
    public static GVirtuSResult ok(byte[] output) {
        return new GVirtuSResult(0, 0, output);
    }

    /** Exit code 0 with the buffer's bytes as output. */
    public static GVirtuSResult ok(GVirtuSBuffer output) {
        return ok(output.toByteArray());
    }

    /** An exit code and an output; the backend fills in the elapsed time. */
    public static GVirtuSResult of(int exitCode, byte[] output) {
        return new GVirtuSResult(exitCode, 0, output);
    }

    /** An exit code with an empty output, as GVirtuS routines report most errors. */
    public static GVirtuSResult error(int exitCode) {
        return new GVirtuSResult(exitCode, 0, EMPTY);
    }

    public int exitCode() {
        return exitCode;
    }

    /** Whether the exit code is 0. */
    public boolean succeeded() {
        return exitCode == 0;
    }

    public double elapsedSeconds() {
        return elapsedSeconds;
    }

    /** The marshalled output; the array itself, not a copy. */
    public byte[] output() {
        return output;
    }

    /** The output, positioned at its start for reading. */
    public GVirtuSBuffer outputBuffer() {
        return GVirtuSBuffer.wrap(output);
    }

    /** This result with another elapsed time. */
    public GVirtuSResult withElapsedSeconds(double seconds) {
        return new GVirtuSResult(exitCode, seconds, output);
    }

    /** Writes this result as a reply and syncs, so it is on its way to the peer when this returns. */
    public void writeTo(Communicator c) throws IOException {
        Wire.writeResult(c, this);
    }

    /**
     * Reads a reply.
     *
     * @throws java.io.EOFException if the stream ends before the reply is complete, even before its first byte
     * @throws io.rdmacomm.api.CommunicatorException if the output is longer than
     *     {@link GVirtuSLimits#maxOutputBytes()}
     */
    public static GVirtuSResult readFrom(Communicator c, GVirtuSLimits limits) throws IOException {
        return Wire.readResult(c, limits, "a request");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GVirtuSResult r && exitCode == r.exitCode
                && Double.compare(elapsedSeconds, r.elapsedSeconds) == 0 && Arrays.equals(output, r.output);
    }

    @Override
    public int hashCode() {
        return (31 * exitCode + Double.hashCode(elapsedSeconds)) * 31 + Arrays.hashCode(output);
    }

    @Override
    public String toString() {
        return "GVirtuSResult[exit " + exitCode + ", " + elapsedSeconds + " s, " + output.length + " output bytes]";
    }
}
