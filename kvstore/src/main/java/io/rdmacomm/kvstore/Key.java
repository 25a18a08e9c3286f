package io.rdmacomm.kvstore;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A stored key: immutable bytes with their hash. {@link Probe} is its mutable, reusable counterpart for
 * lookups, so a GET allocates nothing: {@code ConcurrentHashMap.get} compares the argument with the stored keys
 * ({@code probe.equals(key)}), never the other way round.
 */
final class Key {
    private final byte[] bytes;
    private final int hash;

    private Key(byte[] bytes, int hash) {
        this.bytes = bytes;
        this.hash = hash;
    }

    static Key of(byte[] bytes) {
        byte[] copy = bytes.clone();
        return new Key(copy, hash(copy, copy.length));
    }

    byte[] bytes() {
        return bytes.clone();
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Key k && k.hash == hash && Arrays.equals(k.bytes, bytes);
    }

    @Override
    public String toString() {
        return display(bytes, bytes.length);
    }

    private static int hash(byte[] b, int length) {
        int h = 1;
        for (int i = 0; i < length; i++) {
            h = 31 * h + b[i];
        }
        return h ^ (h >>> 16);
    }

    /** A key for messages: quoted UTF-8 when it is printable text, else hex (long keys shortened). */
    static String display(byte[] b, int length) {
        int shown = Math.min(length, 64);
        String more = shown < length ? "…(" + length + " bytes)" : "";
        try {
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(b, 0, shown)).toString();
            if (text.codePoints().allMatch(c -> c >= 0x20 && c != 0x7f)) {
                return "'" + text + "'" + more;
            }
        } catch (CharacterCodingException e) {
            // not text: hex below
        }
        return "0x" + HexFormat.of().formatHex(b, 0, shown) + more;
    }

    /** A mutable key to look up with; holds up to its capacity's bytes, which {@link #ensureCapacity} raises. */
    static final class Probe {
        private byte[] bytes;
        private int length;
        private int hash;

        Probe(int capacity) {
            bytes = new byte[capacity];
        }

        /** The array to fill before {@link #set(int)}; a new one after {@link #ensureCapacity} grew it. */
        byte[] array() {
            return bytes;
        }

        /** Makes {@link #array()} hold at least {@code n} bytes; true if it is a new array (the key is lost). */
        boolean ensureCapacity(int n) {
            if (n <= bytes.length) {
                return false;
            }
            bytes = new byte[n];
            set(0);
            return true;
        }

        /** Takes the first {@code length} bytes of {@link #array()} as the key. */
        Probe set(int length) {
            this.length = length;
            this.hash = hash(bytes, length);
            return this;
        }

        Probe set(byte[] key) {
            System.arraycopy(key, 0, bytes, 0, key.length);
            return set(key.length);
        }

        int length() {
            return length;
        }

        Key toKey() {
            return new Key(Arrays.copyOf(bytes, length), hash);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.hash == hash && Arrays.equals(k.bytes, 0, k.bytes.length, bytes, 0,
                    length);
        }

        @Override
        public String toString() {
            return display(bytes, length);
        }
    }
}
