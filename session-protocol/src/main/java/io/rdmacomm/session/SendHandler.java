package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * {@link Exchange#SEND}, two-sided as in the seed's send/receive mode: the client sends a message of the announced
 * length, the server receives it and acknowledges with a result whose body is {@code int bytes received |
 * int CRC32C of them}, so the client can check that every byte arrived intact.
 */
final class SendHandler implements ExchangeHandler {
    static final int BUFFER_SIZE = 64 * 1024;

    @Override
    public void run(Communicator peer, SessionRequest request) throws IOException {
        int length = request.sendLength();
        ByteBuffer buffer = ByteBuffer.allocate(Math.max(1, Math.min(length, BUFFER_SIZE)));
        CRC32C crc = new CRC32C();
        int received = 0;
        while (received < length) {
            buffer.clear().limit(Math.min(buffer.capacity(), length - received));
            if (peer.read(buffer) < 0) {
                HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.TRUNCATED, "SEND message truncated: "
                        + received + " of " + length + " bytes arrived before the stream ended"));
                return;
            }
            crc.update(buffer.flip());
            received += buffer.limit();
        }
        ExchangeResult.ok(ByteBuffer.allocate(8).putInt(received).putInt((int) crc.getValue()).flip()).send(peer);
        HandlerSupport.awaitEndOfStream(peer);
    }
}
