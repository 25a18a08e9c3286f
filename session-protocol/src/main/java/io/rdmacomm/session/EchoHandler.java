package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * {@link Exchange#ECHO}: whatever arrives goes straight back, synced so a waiting client sees it at once.
 *
 * <p>A session waits for its client in a read into a small buffer of its own ({@link #IDLE_BUFFER_SIZE}), so ten
 * thousand idle echo sessions hold 1 KiB each, not 64. When a read fills it, more is on its way: the session borrows
 * a {@link #BUFFER_SIZE} buffer from a process-wide pool and echoes from it while bytes are there to read without
 * waiting ({@link Communicator#available()}), then gives it back before it syncs and waits again.
 */
final class EchoHandler implements ExchangeHandler {
    static final int BUFFER_SIZE = 64 * 1024;
    static final int IDLE_BUFFER_SIZE = 1024;
    /** Large buffers kept for the next burst; more are allocated when all are lent, and dropped when returned. */
    private static final ArrayBlockingQueue<ByteBuffer> POOL = new ArrayBlockingQueue<>(64);

    @Override
    public void run(Communicator peer, SessionRequest request) throws IOException {
        ByteBuffer small = ByteBuffer.allocateDirect(IDLE_BUFFER_SIZE);
        while (true) {
            small.clear();
            if (peer.read(small) < 0) {
                return;
            }
            boolean full = !small.hasRemaining();
            small.flip();
            peer.write(small);
            if (full && !echoBurst(peer)) {
                peer.sync();
                return;
            }
            peer.sync();
        }
    }

    /** Echoes what can be read without waiting through a pooled buffer; false at the end of the stream. */
    private static boolean echoBurst(Communicator peer) throws IOException {
        ByteBuffer big = POOL.poll();
        if (big == null) {
            big = ByteBuffer.allocateDirect(BUFFER_SIZE);
        }
        try {
            for (int ready; (ready = peer.available()) != 0;) {
                if (ready < 0) {
                    return false;
                }
                big.clear();
                if (peer.read(big) < 0) {
                    return false;
                }
                big.flip();
                peer.write(big);
            }
            return true;
        } finally {
            POOL.offer(big);
        }
    }
}
