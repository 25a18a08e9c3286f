package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;

/** {@link Exchange#ECHO}: whatever arrives goes straight back, synced so a waiting client sees it at once. */
final class EchoHandler implements ExchangeHandler {
    static final int BUFFER_SIZE = 64 * 1024;

    @Override
    public void run(Communicator peer, SessionRequest request) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_SIZE);
        while (true) {
            buffer.clear();
            if (peer.read(buffer) < 0) {
                return;
            }
            buffer.flip();
            peer.write(buffer);
            peer.sync();
        }
    }
}
