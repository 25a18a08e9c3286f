package io.rdmacomm.rdma;

import io.rdmacomm.api.support.RateLimitedLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
    /** After a round failed as a whole: a failure that persists must not spin the thread. */
    private static final long FAILURE_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final RateLimitedLog failures = new RateLimitedLog(LOG);

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
                for (Iterator<SelectionKey> it = s.selectedKeys().iterator(); it.hasNext();) {
                    SelectionKey k = it.next();
                    it.remove();
                    try {
                        check((SocketChannel) k.channel());
                    } catch (Exception | Error e) { // NOPMD: one socket's failure must not end the watch
                        failures.warn("watching a bootstrap socket failed, watching on: {}", e.toString(), e);
                    }
                }
            } catch (ClosedSelectorException e) {
                LOG.error("bootstrap watch: its selector was closed; connections are still checked by their"
                        + " provider; the next watch starts another thread", e);
                synchronized (this) {
                    if (selector == s) {
                        thread = null;
                        selector = null;
                    }
                }
                return;
            } catch (Exception | Error e) { // NOPMD: nothing of one round may end the watch
                failures.warn("bootstrap watch failed, watching on: {}", e.toString(), e);
                LockSupport.parkNanos(FAILURE_PAUSE_NANOS);
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
