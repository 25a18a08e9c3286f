package io.rdmacomm.testkit;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.MemoryRegion;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.util.EnumSet;

/**
 * A peer process for tests across JVMs (e.g. of different JDKs), started through {@link PeerSignals}:
 * {@code serve <endpoint>} (signals {@code SERVING <endpoint>}, accepts one client) or {@code connect <endpoint>}
 * (signals {@code CONNECTED}), then signals {@code PEER <provider> <java feature version>} and:
 * <ol>
 *   <li>registers a {@link #REGION} byte region for remote reads and writes, filled with {@link #pattern}, and
 *       sends its descriptor (u32 length, bytes);</li>
 *   <li>answers each frame (u32 n, n bytes) with the same frame, and a lone u32 -1 with a frame of the region's
 *       content, until a lone u32 -2 (or the end of the stream); then closes and exits 0.</li>
 * </ol>
 */
public final class EchoPeerMain {
    /** Bytes of the peer's region. */
    public static final int REGION = 64 * 1024;
    /** The frame length that asks for the region's content. */
    public static final int SHOW_REGION = -1;
    /**
     * The frame length that ends the exchange: this side closes first, so the other side sees the end of the
     * stream and no sync of ours races with its close.
     */
    public static final int BYE = -2;

    private EchoPeerMain() {
    }

    /** The region's initial byte at {@code i}. */
    public static byte pattern(int i) {
        return (byte) (i * 7 + 1);
    }

    /** Reads one frame the peer sends (u32 n, n bytes): an echo, the region's content or its descriptor. */
    public static byte[] readFrame(Communicator c) throws java.io.IOException {
        ByteBuffer length = ByteBuffer.allocate(4);
        c.readFully(length);
        ByteBuffer b = ByteBuffer.allocate(length.getInt(0));
        c.readFully(b);
        return b.array();
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("serve")) {
            try (Communicator server = Communicators.serve(args[1])) {
                PeerSignals.send("SERVING " + server.endpoint());
                try (Communicator c = server.accept()) {
                    echo(c);
                }
            }
        } else {
            try (Communicator c = Communicators.connect(args[1])) {
                PeerSignals.send("CONNECTED");
                echo(c);
            }
        }
    }

    private static void echo(Communicator c) throws Exception {
        // the provider's name, where the transport has one (rdma://), without depending on the transport
        Object provider = c.getClass().getMethod("providerName").invoke(c);
        PeerSignals.send("PEER " + provider + " " + Runtime.version().feature());
        ByteBuffer memory = ByteBuffer.allocateDirect(REGION);
        for (int i = 0; i < REGION; i++) {
            memory.put(i, pattern(i));
        }
        // not closed here: closing a region asks the peer to acknowledge, and the peer has gone once the stream
        // ended; the communicator's close deregisters it without asking
        MemoryRegion region = c.register(memory, EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE));
        byte[] d = region.descriptor().toBytes();
        c.write(ByteBuffer.allocate(4 + d.length).putInt(d.length).put(d).flip());
        c.sync();
        ByteBuffer length = ByteBuffer.allocate(4);
        while (true) {
            try {
                c.readFully(length.clear());
            } catch (EOFException e) {
                return;
            }
            int n = length.getInt(0);
            if (n == BYE) {
                return;
            }
            ByteBuffer payload;
            if (n == SHOW_REGION) {
                payload = memory.duplicate().clear();
            } else {
                payload = ByteBuffer.allocateDirect(n);
                c.readFully(payload);
                payload.flip();
            }
            c.write(ByteBuffer.allocate(4).putInt(payload.remaining()).flip());
            c.write(payload);
            c.sync();
        }
    }
}
