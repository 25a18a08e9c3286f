package io.rdmacomm.gvirtus;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * Marshals routine arguments and results in the layout of GVirtuS's {@code Buffer}, so the bytes mean the same
 * to a C++ frontend or backend: values are appended at the end and read from a cursor that starts at the
 * beginning.
 *
 * <table>
 *   <caption>Layout (all integers little-endian, as GVirtuS writes host order on x86-64 and aarch64)</caption>
 *   <tr><th>Java call</th><th>GVirtuS call</th><th>bytes</th></tr>
 *   <tr><td>{@code addByte/Short/Int/Long/Float/Double}</td><td>{@code Add<T>(item)}</td>
 *       <td>the value's 1, 2, 4, 8, 4 or 8 raw bytes, no length</td></tr>
 *   <tr><td>{@link #addPointer(byte[])}, {@code addArray(int[])} ...</td><td>{@code Add<T>(T *item, n)}</td>
 *       <td>8-byte length in bytes ({@code sizeof(T) * n}), then the bytes</td></tr>
 *   <tr><td>{@link #addNullPointer()}</td><td>{@code Add<T>((T *) NULL)}</td><td>8 zero bytes: a length of 0</td></tr>
 *   <tr><td>{@link #addString(String)}</td><td>{@code AddString(s)}</td>
 *       <td>8-byte {@code strlen + 1}, the same 8 bytes again, the characters and a NUL</td></tr>
 * </table>
 *
 * <p>A device pointer or opaque handle ({@code AddMarshal}) is its 8 raw bytes: {@link #addLong(long)}.
 * GVirtuS cannot tell an empty array from a null pointer (both are a zero length), and neither can this class:
 * {@link #getPointer()} returns {@code null} for both.
 *
 * <p>Reads are bounded: a read past the end, or a length larger than the bytes left, throws
 * {@link GVirtuSFormatException} naming what was read, where, and how many bytes were needed and left; the
 * cursor does not move then. Not thread-safe.
 */
public final class GVirtuSBuffer {
    /** The largest array a JVM reliably allocates. */
    static final int MAX_SIZE = Integer.MAX_VALUE - 8;
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private byte[] bytes;
    private int length;
    private int position;

    private GVirtuSBuffer(byte[] bytes, int length) {
        this.bytes = bytes;
        this.length = length;
    }

    /** An empty buffer to add to. */
    public static GVirtuSBuffer create() {
        return new GVirtuSBuffer(new byte[64], 0);
    }

    /**
     * A buffer over {@code bytes} (not copied: don't change them while the buffer is in use), positioned at the
     * start for reading; adding appends after them.
     */
    public static GVirtuSBuffer wrap(byte[] bytes) {
        return new GVirtuSBuffer(Objects.requireNonNull(bytes, "bytes"), bytes.length);
    }

    // ---- adding ---------------------------------------------------------------------------------------------

    public GVirtuSBuffer addByte(byte v) {
        int at = reserve(1); // before reading the field: reserve may replace the array
        bytes[at] = v;
        return this;
    }

    public GVirtuSBuffer addShort(short v) {
        int at = reserve(2);
        SHORT.set(bytes, at, v);
        return this;
    }

    public GVirtuSBuffer addInt(int v) {
        int at = reserve(4);
        INT.set(bytes, at, v);
        return this;
    }

    /** A 64-bit integer, a {@code size_t}, or a device pointer or handle ({@code AddMarshal}). */
    public GVirtuSBuffer addLong(long v) {
        int at = reserve(8);
        LONG.set(bytes, at, v);
        return this;
    }

    public GVirtuSBuffer addFloat(float v) {
        return addInt(Float.floatToRawIntBits(v));
    }

    public GVirtuSBuffer addDouble(double v) {
        return addLong(Double.doubleToRawLongBits(v));
    }

    /** A host pointer argument: its length, then its bytes; {@code null} adds a null pointer. */
    public GVirtuSBuffer addPointer(byte[] data) {
        if (data == null) {
            return addNullPointer();
        }
        return addPointer(ByteBuffer.wrap(data));
    }

    /** A host pointer argument from the remaining bytes of {@code data} (its position ends at its limit). */
    public GVirtuSBuffer addPointer(ByteBuffer data) {
        int n = data.remaining();
        int at = reserve(Math.addExact(8L, n));
        LONG.set(bytes, at, (long) n);
        data.get(bytes, at + 8, n);
        return this;
    }

    /** A null pointer: a length of 0 and no bytes. */
    public GVirtuSBuffer addNullPointer() {
        return addLong(0);
    }

    /** An {@code int} array as a pointer argument: length {@code 4 * n}, then the elements. */
    public GVirtuSBuffer addArray(int[] values) {
        ByteBuffer b = ByteBuffer.allocate(Math.multiplyExact(values.length, 4)).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(values);
        return addPointer(b);
    }

    /** A {@code long} array as a pointer argument: length {@code 8 * n}, then the elements. */
    public GVirtuSBuffer addArray(long[] values) {
        ByteBuffer b = ByteBuffer.allocate(Math.multiplyExact(values.length, 8)).order(ByteOrder.LITTLE_ENDIAN);
        b.asLongBuffer().put(values);
        return addPointer(b);
    }

    /** A {@code float} array as a pointer argument: length {@code 4 * n}, then the elements. */
    public GVirtuSBuffer addArray(float[] values) {
        ByteBuffer b = ByteBuffer.allocate(Math.multiplyExact(values.length, 4)).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(values);
        return addPointer(b);
    }

    /** A {@code double} array as a pointer argument: length {@code 8 * n}, then the elements. */
    public GVirtuSBuffer addArray(double[] values) {
        ByteBuffer b = ByteBuffer.allocate(Math.multiplyExact(values.length, 8)).order(ByteOrder.LITTLE_ENDIAN);
        b.asDoubleBuffer().put(values);
        return addPointer(b);
    }

    /**
     * A C string as GVirtuS's {@code AddString} writes it: its size with the NUL, twice (the outer size, then the
     * size of the character array that follows), then its UTF-8 bytes and a NUL.
     *
     * @throws IllegalArgumentException if {@code s} contains a NUL character, which a C string cannot hold
     */
    public GVirtuSBuffer addString(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        for (byte b : utf8) {
            if (b == 0) {
                throw new IllegalArgumentException("a C string cannot contain NUL: \"" + s.replace("\0", "\\0") + "\"");
            }
        }
        long size = utf8.length + 1L;
        int at = reserve(16 + size);
        LONG.set(bytes, at, size);
        LONG.set(bytes, at + 8, size);
        System.arraycopy(utf8, 0, bytes, at + 16, utf8.length);
        bytes[at + 16 + utf8.length] = 0;
        return this;
    }

    /** Raw bytes with no length before them, e.g. a structure the peer reads with a fixed size. */
    public GVirtuSBuffer addRaw(byte[] data) {
        int at = reserve(data.length);
        System.arraycopy(data, 0, bytes, at, data.length);
        return this;
    }

    // ---- reading --------------------------------------------------------------------------------------------

    public byte getByte() {
        return bytes[take(1, "byte")];
    }

    public short getShort() {
        return (short) SHORT.get(bytes, take(2, "short"));
    }

    public int getInt() {
        return (int) INT.get(bytes, take(4, "int"));
    }

    public long getLong() {
        return (long) LONG.get(bytes, take(8, "long"));
    }

    public float getFloat() {
        return Float.intBitsToFloat((int) INT.get(bytes, take(4, "float")));
    }

    public double getDouble() {
        return Double.longBitsToDouble((long) LONG.get(bytes, take(8, "double")));
    }

    /** A host pointer argument's bytes, or {@code null} for a null pointer (a length of 0). */
    public byte[] getPointer() {
        int start = position;
        int n = pointerLength(1, "pointer argument");
        if (n == 0) {
            return null;
        }
        int at = take(n, "pointer argument of " + n + " bytes at offset " + start);
        return Arrays.copyOfRange(bytes, at, at + n);
    }

    /** An {@code int} array written by {@code addArray(int[])} or {@code Add(int *, n)}; null pointer: {@code null}. */
    public int[] getIntArray() {
        ByteBuffer b = arrayBytes(4, "int array");
        if (b == null) {
            return null;
        }
        int[] v = new int[b.remaining() / 4];
        b.asIntBuffer().get(v);
        return v;
    }

    /** A {@code long} array; null pointer: {@code null}. */
    public long[] getLongArray() {
        ByteBuffer b = arrayBytes(8, "long array");
        if (b == null) {
            return null;
        }
        long[] v = new long[b.remaining() / 8];
        b.asLongBuffer().get(v);
        return v;
    }

    /** A {@code float} array; null pointer: {@code null}. */
    public float[] getFloatArray() {
        ByteBuffer b = arrayBytes(4, "float array");
        if (b == null) {
            return null;
        }
        float[] v = new float[b.remaining() / 4];
        b.asFloatBuffer().get(v);
        return v;
    }

    /** A {@code double} array; null pointer: {@code null}. */
    public double[] getDoubleArray() {
        ByteBuffer b = arrayBytes(8, "double array");
        if (b == null) {
            return null;
        }
        double[] v = new double[b.remaining() / 8];
        b.asDoubleBuffer().get(v);
        return v;
    }

    /**
     * A C string written by {@link #addString(String)} or GVirtuS's {@code AddString}, without its NUL; {@code null}
     * when the inner size is 0, which GVirtuS's {@code AssignString} also reads as a null string.
     */
    public String getString() {
        int start = position;
        if (remaining() < 16) {
            throw new GVirtuSFormatException(describe("string header (two 8-byte sizes)", start, 16));
        }
        long outer = (long) LONG.get(bytes, start);
        long inner = (long) LONG.get(bytes, start + 8);
        if (inner == 0) {
            position = start + 16;
            return null;
        }
        if (outer < 1 || outer > remaining() - 16) {
            throw new GVirtuSFormatException("GVirtuS buffer: string at offset " + start + " claims "
                    + Long.toUnsignedString(outer) + " bytes but " + (remaining() - 16) + " remain after its sizes");
        }
        int n = (int) outer;
        if (bytes[start + 16 + n - 1] != 0) {
            throw new GVirtuSFormatException("GVirtuS buffer: string of " + n + " bytes at offset " + start
                    + " does not end with NUL");
        }
        position = start + 16 + n;
        return new String(bytes, start + 16, n - 1, StandardCharsets.UTF_8);
    }

    /** The next {@code n} bytes as they are, with no length before them. */
    public byte[] getRaw(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("negative byte count " + n);
        }
        int at = take(n, n + " raw bytes");
        return Arrays.copyOfRange(bytes, at, at + n);
    }

    // ---- state ----------------------------------------------------------------------------------------------

    /** The number of bytes added (or wrapped). */
    public int size() {
        return length;
    }

    /** The read cursor: how many bytes have been read. */
    public int position() {
        return position;
    }

    /** Bytes not yet read. */
    public int remaining() {
        return length - position;
    }

    public boolean hasRemaining() {
        return position < length;
    }

    /** A copy of all bytes, read or not: what a request's input or a reply's output carries. */
    public byte[] toByteArray() {
        return Arrays.copyOf(bytes, length);
    }

    @Override
    public String toString() {
        return "GVirtuSBuffer[size=" + length + ", position=" + position + "]";
    }

    // ---- internals ------------------------------------------------------------------------------------------

    /** Makes room for {@code n} more bytes and returns where they go. */
    private int reserve(long n) {
        long needed = length + n;
        if (needed > MAX_SIZE) {
            throw new IllegalStateException("GVirtuS buffer would grow to " + needed + " bytes, over the "
                    + MAX_SIZE + " a Java array can hold");
        }
        if (needed > bytes.length) {
            // doubling keeps a long series of adds linear, as GVirtuS's block-wise realloc does
            bytes = Arrays.copyOf(bytes, (int) Math.min(MAX_SIZE, Math.max(needed, 2L * bytes.length)));
        }
        int at = length;
        length = (int) needed;
        return at;
    }

    /** Consumes {@code n} bytes and returns where they start, or throws without moving the cursor. */
    private int take(int n, String what) {
        if (n > remaining()) {
            throw new GVirtuSFormatException(describe(what, position, n));
        }
        int at = position;
        position += n;
        return at;
    }

    /** Reads a pointer's 8-byte length, checks it against what is left and a multiple of {@code unit}. */
    private int pointerLength(int unit, String what) {
        int start = position;
        long n = (long) LONG.get(bytes, take(8, what + " length"));
        int left = remaining();
        if (n < 0 || n > left || n % unit != 0) {
            position = start;
            throw new GVirtuSFormatException("GVirtuS buffer: " + what + " at offset " + start + " claims "
                    + Long.toUnsignedString(n) + " bytes" + (n >= 0 && n <= left ? ", not a multiple of " + unit
                            : " but " + left + " remain after its length"));
        }
        return (int) n;
    }

    private ByteBuffer arrayBytes(int unit, String what) {
        int n = pointerLength(unit, what);
        if (n == 0) {
            return null;
        }
        int at = take(n, what);
        return ByteBuffer.wrap(bytes, at, n).slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    private String describe(String what, int at, int needed) {
        return "GVirtuS buffer: cannot read " + what + " (" + needed + " bytes) at offset " + at + ": "
                + (length - at) + " of " + length + " bytes remain";
    }
}
