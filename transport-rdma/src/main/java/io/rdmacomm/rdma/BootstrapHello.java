package io.rdmacomm.rdma;

import io.rdmacomm.api.HandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The client's first bootstrap message:
 *
 * <pre>
 * body 0  u8  provider name length n (1 to 16), then the name (printable ASCII)
 *      1+n     u32 flags ({@link BootstrapFrame#FLAG_AUTHENTICATION}; other bits refused)
 *      5+n     u16 node address length a (1 to 4096), then the client node's address
 *      7+n+a   u32 the client's channel id
 *      11+n+a  u32 the receive ring size the client asks for (positive)
 *      15+n+a  tail; entry type 1: the provider's wire family (1 to 16 printable ASCII), absent from peers that
 *              predate it (then only a provider of the same name is accepted); entry type 2: one byte, 1 where the
 *              client's endpoint says oneSided=trusted, absent otherwise (servers that predate it skip it)
 * </pre>
 *
 * {@code family} is null when the peer sent none.
 */
record BootstrapHello(String provider, String family, int flags, byte[] nodeAddress, int channelId, int ringSize,
        boolean oneSidedTrusted) {
    static final int MAX_PROVIDER = 16;
    static final int MAX_ADDRESS = 4096;
    private static final String WHAT = "HELLO";
    private static final int FAMILY_ENTRY = 1;
    private static final int ONE_SIDED_TRUSTED_ENTRY = 2;

    /** A HELLO without a wire family, as peers sent before families existed. */
    BootstrapHello(String provider, int flags, byte[] nodeAddress, int channelId, int ringSize) {
        this(provider, null, flags, nodeAddress, channelId, ringSize);
    }

    /** A HELLO of a client whose endpoint keeps the default oneSided=checked. */
    BootstrapHello(String provider, String family, int flags, byte[] nodeAddress, int channelId, int ringSize) {
        this(provider, family, flags, nodeAddress, channelId, ringSize, false);
    }

    ByteBuffer encode() {
        byte[] name = provider.getBytes(StandardCharsets.US_ASCII);
        byte[] fam = family == null ? new byte[0] : family.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer b = ByteBuffer.allocate(1 + name.length + 4 + 2 + nodeAddress.length + 8
                + (family == null ? 0 : 4 + fam.length) + (oneSidedTrusted ? 5 : 0));
        b.put((byte) name.length).put(name).putInt(flags);
        BootstrapFrame.putBytes(b, nodeAddress);
        b.putInt(channelId).putInt(ringSize);
        if (family != null) {
            b.putShort((short) FAMILY_ENTRY);
            BootstrapFrame.putBytes(b, fam);
        }
        if (oneSidedTrusted) {
            b.putShort((short) ONE_SIDED_TRUSTED_ENTRY);
            BootstrapFrame.putBytes(b, new byte[] {1});
        }
        return BootstrapFrame.frame(BootstrapFrame.HELLO, b.flip());
    }

    static BootstrapHello decode(ByteBuffer body, String peer) throws HandshakeException {
        BootstrapFrame.need(body, 1, "provider name length", WHAT, peer);
        int n = Byte.toUnsignedInt(body.get());
        if (n < 1 || n > MAX_PROVIDER) {
            throw BootstrapFrame.malformed(peer, WHAT, "provider name of " + n + " bytes (1 to " + MAX_PROVIDER
                    + " allowed)");
        }
        String name = name(body, n, "provider name", peer);
        int flags = BootstrapFrame.i32(body, "flags", WHAT, peer);
        byte[] address = BootstrapFrame.bytes(body, MAX_ADDRESS, "node address", WHAT, peer);
        int[] channelAndRing = BootstrapFrame.channelAndRing(body, WHAT, peer);
        String family = null;
        boolean trusted = false;
        while (body.hasRemaining()) {
            int type = BootstrapFrame.u16(body, "extension type", WHAT, peer);
            int length = BootstrapFrame.u16(body, "extension length", WHAT, peer);
            if (type == ONE_SIDED_TRUSTED_ENTRY) {
                BootstrapFrame.need(body, length, "oneSided entry", WHAT, peer);
                if (length != 1 || body.get() != 1 || trusted) {
                    throw BootstrapFrame.malformed(peer, WHAT, "oneSided entry of " + length
                            + " bytes, not 1, or not the byte 1, or given twice");
                }
                trusted = true;
            } else if (type != FAMILY_ENTRY) {
                BootstrapFrame.need(body, length, "extension value", WHAT, peer);
                body.position(body.position() + length);
            } else if (family != null) {
                throw BootstrapFrame.malformed(peer, WHAT, "wire family given twice");
            } else if (length < 1 || length > MAX_PROVIDER) {
                throw BootstrapFrame.malformed(peer, WHAT, "wire family of " + length + " bytes (1 to "
                        + MAX_PROVIDER + " allowed)");
            } else {
                family = name(body, length, "wire family", peer);
            }
        }
        return new BootstrapHello(name, family, flags, address, channelAndRing[0], channelAndRing[1], trusted);
    }

    /** {@code n} bytes of printable ASCII naming a provider or wire family. */
    private static String name(ByteBuffer body, int n, String field, String peer) throws HandshakeException {
        BootstrapFrame.need(body, n, field, WHAT, peer);
        byte[] name = new byte[n];
        body.get(name);
        for (byte c : name) {
            if (c < 0x21 || c > 0x7e) {
                throw BootstrapFrame.malformed(peer, WHAT, field + " is not printable ASCII");
            }
        }
        return BootstrapFrame.ascii(name);
    }
}
