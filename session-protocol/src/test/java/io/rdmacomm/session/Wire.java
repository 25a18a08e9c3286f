package io.rdmacomm.session;

import io.rdmacomm.testkit.ScriptedPeer;
import java.io.IOException;
import java.nio.ByteBuffer;

/** Decodes what a handler wrote to a mock peer, frame by frame, advancing the buffer past each. */
final class Wire {
    private Wire() {
    }

    static SessionReply reply(ByteBuffer out) throws IOException {
        ScriptedPeer reader = new ScriptedPeer(remaining(out), Integer.MAX_VALUE);
        SessionReply reply = SessionReply.read(reader.communicator());
        out.position(out.position() + reader.consumed());
        return reply;
    }

    static ExchangeResult result(ByteBuffer out) throws IOException {
        ScriptedPeer reader = new ScriptedPeer(remaining(out), Integer.MAX_VALUE);
        ExchangeResult result = ExchangeResult.read(reader.communicator());
        out.position(out.position() + reader.consumed());
        return result;
    }

    private static byte[] remaining(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return bytes;
    }
}
