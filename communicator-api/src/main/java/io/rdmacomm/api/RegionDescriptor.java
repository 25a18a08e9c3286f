package io.rdmacomm.api;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;

/**
 * What a peer needs to reach a registered {@link MemoryRegion}: the region's address, its length, the access
 * rights granted, and the transport's remote key (a UCX packed rkey, a verbs rkey, or a TCP region token).
 * A small immutable value with a fixed big-endian wire form, to be sent to the peer by any means.
 *
 * <pre>
 *   u16 magic 0x5244 ('RD') | u8 version 1 | u8 access bits | u64 address | u64 length | u16 key length | key
 * </pre>
 */
public final class RegionDescriptor {
    private static final short MAGIC = 0x5244;
    private static final byte VERSION = 1;
    /** Bytes before the key in the wire form. */
    public static final int HEADER_BYTES = 2 + 1 + 1 + 8 + 8 + 2;
    /** The largest key the wire form carries. */
    public static final int MAX_KEY_BYTES = 4096;

    private final long address;
    private final long length;
    private final Set<Access> access;
    private final byte[] key;

    public RegionDescriptor(long address, long length, Set<Access> access, byte[] key) {
        if (length < 0) {
            throw new IllegalArgumentException("negative region length " + length);
        }
        if (key.length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("remote key of " + key.length + " bytes exceeds " + MAX_KEY_BYTES);
        }
        this.address = address;
        this.length = length;
        this.access = Set.copyOf(access);
        this.key = key.clone();
    }

    /** The region's base address in the owner's address space (an opaque token on some transports). */
    public long address() {
        return address;
    }

    public long length() {
        return length;
    }

    public Set<Access> access() {
        return access;
    }

    /** The remote key; a copy. */
    public byte[] key() {
        return key.clone();
    }

    /** The size of {@link #writeTo}'s output. */
    public int encodedLength() {
        return HEADER_BYTES + key.length;
    }

    /** Appends the wire form to {@code dst} (big-endian regardless of the buffer's order). */
    public void writeTo(ByteBuffer dst) {
        ByteOrder order = dst.order();
        dst.order(ByteOrder.BIG_ENDIAN);
        dst.putShort(MAGIC).put(VERSION).put((byte) Access.toBits(access)).putLong(address).putLong(length)
                .putShort((short) key.length).put(key);
        dst.order(order);
    }

    /** The wire form as a new array. */
    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(encodedLength());
        writeTo(b);
        return b.array();
    }

    /**
     * Reads a descriptor's wire form from {@code src}.
     *
     * @throws IllegalArgumentException if the bytes are not a descriptor (bad magic, version, access bits or
     *     key length, or too few bytes)
     */
    public static RegionDescriptor readFrom(ByteBuffer src) {
        ByteOrder order = src.order();
        src.order(ByteOrder.BIG_ENDIAN);
        try {
            if (src.remaining() < HEADER_BYTES) {
                throw new IllegalArgumentException("not a region descriptor: " + src.remaining()
                        + " bytes, at least " + HEADER_BYTES + " expected");
            }
            short magic = src.getShort();
            if (magic != MAGIC) {
                throw new IllegalArgumentException("not a region descriptor: magic 0x"
                        + Integer.toHexString(magic & 0xffff) + ", expected 0x5244");
            }
            byte version = src.get();
            if (version != VERSION) {
                throw new IllegalArgumentException("region descriptor version " + version + ", expected " + VERSION);
            }
            Set<Access> access = Access.fromBits(src.get() & 0xff);
            long address = src.getLong();
            long length = src.getLong();
            int keyLength = src.getShort() & 0xffff;
            if (keyLength > MAX_KEY_BYTES || keyLength > src.remaining()) {
                throw new IllegalArgumentException("region descriptor key of " + keyLength + " bytes, "
                        + src.remaining() + " available");
            }
            byte[] key = new byte[keyLength];
            src.get(key);
            return new RegionDescriptor(address, length, access, key);
        } finally {
            src.order(order);
        }
    }

    /** Parses a descriptor from its wire form. */
    public static RegionDescriptor fromBytes(byte[] bytes) {
        return readFrom(ByteBuffer.wrap(bytes));
    }

    /**
     * Checks a one-sided access of {@code count} bytes at {@code offset} against this descriptor's bounds and
     * rights, as the target of the access does.
     *
     * @throws RemoteAccessException naming the violation
     */
    public void checkAccess(long offset, long count, Access needed) throws RemoteAccessException {
        if (!access.contains(needed)) {
            throw new RemoteAccessException("region " + this + " does not allow " + needed);
        }
        if (offset < 0 || count < 0 || offset > length || count > length - offset) {
            throw new RemoteAccessException("access of " + count + " bytes at offset " + offset
                    + " is out of bounds of region " + this + " (length " + length + ")");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RegionDescriptor d && d.address == address && d.length == length
                && d.access.equals(access) && Arrays.equals(d.key, key);
    }

    @Override
    public int hashCode() {
        return Objects.hash(address, length, access, Arrays.hashCode(key));
    }

    /**
     * Length, access and a fingerprint, never the address or the key: the key is the access token of the region
     * (on tcp:// the only one), and messages that carry this text end up in logs. The fingerprint (the first 4
     * bytes of a SHA-256 of address and key) tells regions apart in a log without revealing either.
     */
    @Override
    public String toString() {
        return "[len=" + length + " " + access + " ref=" + fingerprint() + "]";
    }

    private String fingerprint() {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(ByteBuffer.allocate(8).putLong(0, address).array());
            sha.update(key);
            return HexFormat.of().formatHex(sha.digest(), 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
