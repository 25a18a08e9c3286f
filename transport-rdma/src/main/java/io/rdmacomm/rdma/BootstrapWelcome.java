package io.rdmacomm.rdma;

import io.rdmacomm.api.HandshakeException;
import java.nio.ByteBuffer;

/**
 * The server's acceptance:
 *
 * <pre>
 * body 0     u32 flags ({@link BootstrapFrame#FLAG_AUTHENTICATION} reserved; {@link #FLAG_BOUNDS_ENFORCED}: the
 *                server's transport confines one-sided access to registered bounds)
 *      4     u16 node address length a (1 to 4096), then the server node's address
 *      6+a   u32 the server's channel id
 *      10+a  u32 the ring size the server chose (at most what the client asked for), which both sides use
 *      14+a  tail
 * </pre>
 */
record BootstrapWelcome(int flags, byte[] nodeAddress, int channelId, int ringSize) {
    static final int FLAG_BOUNDS_ENFORCED = 2;
    private static final String WHAT = "WELCOME";

    ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(4 + 2 + nodeAddress.length + 8).putInt(flags);
        BootstrapFrame.putBytes(b, nodeAddress);
        b.putInt(channelId).putInt(ringSize);
        return BootstrapFrame.frame(BootstrapFrame.WELCOME, b.flip());
    }

    static BootstrapWelcome decode(ByteBuffer body, String peer) throws HandshakeException {
        int flags = BootstrapFrame.i32(body, "flags", WHAT, peer);
        byte[] address = BootstrapFrame.bytes(body, BootstrapHello.MAX_ADDRESS, "node address", WHAT, peer);
        int[] channelAndRing = BootstrapFrame.channelAndRing(body, WHAT, peer);
        BootstrapFrame.tail(body, WHAT, peer);
        return new BootstrapWelcome(flags, address, channelAndRing[0], channelAndRing[1]);
    }
}
