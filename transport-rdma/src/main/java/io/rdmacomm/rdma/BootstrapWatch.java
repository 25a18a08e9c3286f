package io.rdmacomm.rdma;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread per process ({@code rdmacomm-rdma-bootstrap-watch}) that watches the bootstrap sockets of all
 * established rdma:// connections: a peer's end of its socket (EOF, reset) fails its connection at once, whatever
 * the provider noticed. Nothing is sent on these sockets yet (liveness heartbeats will be); a byte that arrives is
 * a protocol error and fails the connection too. The thread runs while any socket is watched.
 */
final class BootstrapWatch {
    private static final Logger LOG = LoggerFactory.getLogger(BootstrapWatch.class);
    private static final BootstrapWatch INSTANCE = new BootstrapWatch();

    private final Queue<Runnable> changes = new ConcurrentLinkedQueue<>();
    /** The watched sockets; only the thread touches it. */
    private final Map<SocketChannel, Watched> sockets = new HashMap<>();
    private final ByteBuffer scratch = ByteBuffer.allocate(64);
    private Selector selector;
    private Thread thread;

    private record Watched(SelectionKey key, String peer, Consumer<IOException> lost) {
    }

    static BootstrapWatch get() {
        return INSTANCE;
    }

    /**
     * Watches {@code socket} until {@link #unwatch}; {@code lost} receives the reason once if the peer's side ends
     * first (on the watch thread; it must not block).
     */
    synchronized void watch(SocketChannel socket, String peer, Consumer<IOException> lost) throws IOException {
        socket.configureBlocking(false);
        if (thread == null) {
            Selector s = Selector.open();
            selector = s;
            thread = new Thread(() -> run(s), "rdmacomm-rdma-bootstrap-watch");
            thread.setDaemon(true);
            thread.start();
        }
        Selector s = selector;
        changes.add(() -> {
            try {
                sockets.put(socket, new Watched(socket.register(s, SelectionKey.OP_READ), peer, lost));
            } catch (ClosedChannelException e) {
                // closed before the watch began: nothing to watch
            }
        });
        s.wakeup();
    }

    /** Ends the watch of {@code socket} (if any) and closes it. */
    synchronized void unwatch(SocketChannel socket) {
        if (thread == null) {
            closeQuietly(socket);
            return;
        }
        changes.add(() -> {
            Watched w = sockets.remove(socket);
            if (w != null) {
                w.key().cancel();
            }
            closeQuietly(socket);
        });
        selector.wakeup();
    }

    private void run(Selector s) {
        while (true) {
            try {
                for (Runnable r; (r = changes.poll()) != null;) {
                    r.run();
                }
                synchronized (this) {
                    if (sockets.isEmpty() && changes.isEmpty()) {
                        thread = null;
                        selector = null;
                        s.close();
                        return;
                    }
                }
                s.select();
                for (SelectionKey k : s.selectedKeys()) {
                    check((SocketChannel) k.channel());
                }
                s.selectedKeys().clear();
            } catch (IOException | RuntimeException e) {
                LOG.error("bootstrap watch failed; connections are still checked by their provider", e);
            }
        }
    }

    private void check(SocketChannel socket) {
        Watched w = sockets.get(socket);
        if (w == null) {
            return;
        }
        String reason;
        try {
            int n = socket.read(scratch.clear());
            if (n == 0) {
                return;
            }
            reason = n < 0 ? "the peer's bootstrap connection ended (peer closed or gone)"
                    : "unexpected bytes on the bootstrap connection: " + Wire.describe(scratch.flip());
        } catch (IOException e) {
            reason = "the peer's bootstrap connection failed (" + e.getMessage() + ")";
        }
        sockets.remove(socket);
        w.key().cancel();
        try {
            w.lost().accept(new IOException("connection to " + w.peer() + " lost: " + reason));
        } catch (RuntimeException e) {
            LOG.warn("reporting the end of the bootstrap connection of {}", w.peer(), e);
        }
    }

    private static void closeQuietly(SocketChannel socket) {
        try {
            socket.close();
        } catch (IOException e) {
            LOG.debug("closing a bootstrap socket: {}", e.toString());
        }
    }
}
