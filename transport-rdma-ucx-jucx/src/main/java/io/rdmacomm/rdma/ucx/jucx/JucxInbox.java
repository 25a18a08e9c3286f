package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.ucx.UcxWire;
import java.nio.ByteBuffer;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * The active messages that arrive for one channel, on the worker's progress: control messages go to the
 * channel's handler; an eager write's data is placed into the registered region it names (checked), then its
 * notification goes to the handler. Data that UCX has not received yet (rendezvous) is received first.
 */
final class JucxInbox {
    private final JucxChannel channel;
    private final JucxMemory memory;

    JucxInbox(JucxChannel channel, JucxMemory memory) {
        this.channel = channel;
        this.memory = memory;
    }

    /** A control message: the active message's data. */
    void onControl(UcpAmData data) {
        if (data.isDataValid()) {
            channel.deliver(UcxUtils.getByteBufferView(data.getDataAddress(), data.getLength()));
            return;
        }
        ByteBuffer into = ByteBuffer.allocateDirect((int) data.getLength());
        data.receive(UcxUtils.getAddress(into), new Received(into, "a message"));
    }

    /** An eager write: the header names destination and length, the notification follows it. */
    void onWrite(ByteBuffer header, UcpAmData data) {
        long dst = header.getLong(UcxWire.WRITE_ADDRESS);
        int length = header.getInt(UcxWire.WRITE_LENGTH);
        ByteBuffer note = header.duplicate().position(UcxWire.WRITE_HEADER);
        ByteBuffer noteCopy = note.hasRemaining() ? ByteBuffer.allocate(note.remaining()).put(note).flip() : null;
        if (data.getLength() != length || !memory.acceptsWrite(dst, length)) {
            channel.failConnection(new CommunicatorException(channel.peerName() + " wrote " + length
                    + " bytes at 0x" + Long.toHexString(dst) + " outside any region registered for remote write"));
            return;
        }
        if (data.isDataValid()) {
            UcxUtils.getByteBufferView(dst, length).put(UcxUtils.getByteBufferView(data.getDataAddress(), length));
            if (noteCopy != null) {
                channel.deliver(noteCopy);
            }
        } else {
            data.receive(dst, new Received(noteCopy, "a write"));
        }
    }

    /** Delivers {@code message} (if any) once UCX received the data. */
    private final class Received extends UcxCallback {
        private final ByteBuffer message;
        private final String what;

        Received(ByteBuffer message, String what) {
            this.message = message;
            this.what = what;
        }

        @Override
        public void onSuccess(UcpRequest request) {
            if (message != null) {
                channel.deliver(message);
            }
        }

        @Override
        public void onError(int status, String error) {
            channel.failConnection(new CommunicatorException("receiving " + what + " from " + channel.peerName()
                    + " failed: " + error, status, null));
        }
    }
}
