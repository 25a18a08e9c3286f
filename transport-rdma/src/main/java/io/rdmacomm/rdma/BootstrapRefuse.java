package io.rdmacomm.rdma;

import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.support.Utf8;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The server's refusal, with the reason:
 *
 * <pre>
 * body 0    u16 reason length r (1 to 1024), then the reason in UTF-8
 *      2+r  tail; entry type 1 (length 2): u16 code, {@link #AUTH_REQUIRED} or {@link #NO_SECRET}
 * </pre>
 */
record BootstrapRefuse(String reason, int code) {
    static final int MAX_REASON = 1024;
    /** No code: the reason says it all. */
    static final int NONE = 0;
    /** The server has a shared secret and the client offered no authentication. */
    static final int AUTH_REQUIRED = 1;
    /** The client offered authentication and the server has no shared secret. */
    static final int NO_SECRET = 2;
    private static final String WHAT = "REFUSE";
    private static final int CODE_ENTRY = 1;

    BootstrapRefuse(String reason) {
        this(reason, NONE);
    }

    ByteBuffer encode() {
        byte[] r = Utf8.prefix(reason, MAX_REASON);
        ByteBuffer b = ByteBuffer.allocate(2 + r.length + (code == NONE ? 0 : 6));
        BootstrapFrame.putBytes(b, r);
        if (code != NONE) {
            b.putShort((short) CODE_ENTRY).putShort((short) 2).putShort((short) code);
        }
        return BootstrapFrame.frame(BootstrapFrame.REFUSE, b.flip());
    }

    static BootstrapRefuse decode(ByteBuffer body, String peer) throws HandshakeException {
        byte[] r = BootstrapFrame.bytes(body, MAX_REASON, "reason", WHAT, peer);
        int code = NONE;
        while (body.hasRemaining()) {
            int type = BootstrapFrame.u16(body, "extension type", WHAT, peer);
            int n = BootstrapFrame.u16(body, "extension length", WHAT, peer);
            if (type == CODE_ENTRY && n == 2) {
                code = BootstrapFrame.u16(body, "code", WHAT, peer);
            } else {
                BootstrapFrame.need(body, n, "extension value", WHAT, peer);
                body.position(body.position() + n);
            }
        }
        return new BootstrapRefuse(new String(r, StandardCharsets.UTF_8), code);
    }
}
