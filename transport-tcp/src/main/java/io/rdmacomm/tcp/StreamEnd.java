package io.rdmacomm.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a {@link SocketIo} ends its direction of the stream when the connection closes, before the socket closes:
 * it delivers what was buffered (and TLS's close_notify) within a time budget, a blocking channel under a watchdog
 * that closes it when the budget passes, shuts the output down so the peer reads -1, and reads away input that
 * arrived and nobody will read, so that the kernel does not reset the connection. Stateless: the state is the
 * {@link SocketIo}'s.
 */
final class StreamEnd {
    /** Its lines are the socket's: logged under {@link SocketIo}'s name, as before this class was split off it. */
    private static final Logger LOG = LoggerFactory.getLogger(SocketIo.class);
    /** Buffers for input discarded at close: borrowed only when some is unread. */
    private static final BufferPool DISCARD = BufferPool.of(64 * 1024);
    private static final long CLOSE_DELIVERY_DEFAULT = TimeUnit.SECONDS.toNanos(3);

    private StreamEnd() {
    }

    /** A send that may block: {@link #guarded} runs it. */
    @FunctionalInterface
    interface Send {
        void run() throws IOException;
    }

    /**
     * Runs {@code send} with a watchdog that closes {@code channel} if it takes longer than {@code budget}
     * nanoseconds: a blocking write cannot time out, and close must not hang on a peer that takes nothing.
     */
    private static void guarded(SocketChannel channel, long budget, Send send) throws IOException {
        CountDownLatch done = new CountDownLatch(1);
        Thread watchdog = new Thread(() -> {
            try {
                if (!done.await(budget, TimeUnit.NANOSECONDS)) {
                    TcpServer.closeQuietly(channel);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "rdmacomm-tcp-close-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            send.run();
        } finally {
            done.countDown();
            TcpConnection.join(watchdog);
        }
    }

    /** How a writer sends what it buffered: waiting until {@code deadline} (nanoTime), or without limit if 0. */
    @FunctionalInterface
    interface Flush {
        void run(long deadline) throws IOException;
    }

    /**
     * Ends our direction of the stream of {@code io} at close: sends what was buffered ({@code pending}) within the
     * read timeout, or a few seconds without one, then shuts the output down so the peer reads -1. Failures are
     * logged: the close goes on.
     */
    static void endStream(SocketIo io, boolean pending, Flush flush) {
        TlsSession tls = io.tls();
        long budget = io.settings().readTimeout() > 0 ? io.settings().readTimeout() : CLOSE_DELIVERY_DEFAULT;
        try {
            if (pending || tls != null) {
                Flush all = tls == null ? flush : deadline -> {
                    if (pending) {
                        flush.run(deadline);
                    }
                    closeTls(io, deadline);
                };
                if (io.blocking()) {
                    guarded(io.channel(), budget, () -> all.run(0));
                } else {
                    all.run(System.nanoTime() + budget);
                }
            }
            io.channel().shutdownOutput();
        } catch (IOException e) {
            LOG.debug("bytes written to {} before close could not be delivered", io.peer(), e);
        }
    }

    /** Sends TLS's close_notify, which the peer reads as the end of the stream. */
    private static void closeTls(SocketIo io, long deadline) throws IOException {
        TlsSession tls = io.tls();
        tls.output().lock();
        try {
            tls.closeOutbound();
            long stuckSince = 0;
            while (!tls.flush(io.channel())) {
                stuckSince = io.awaitWritable(deadline, stuckSince);
            }
        } finally {
            tls.output().unlock();
        }
    }

    /**
     * Unless a reader holds {@code readLock}, reads away what arrived on {@code io} and nobody will read, as far as
     * it is already there: closing a socket with unread input makes the kernel reset the connection, and the peer
     * could lose the end of our stream.
     */
    static void discardUnreadInput(SocketIo io, ReentrantLock readLock) {
        if (!readLock.tryLock()) {
            return;
        }
        SocketChannel channel = io.channel();
        ByteBuffer scratch = null;
        try {
            // FIONREAD first: most connections close with nothing unread, and then nothing is allocated or read
            if (channel.socket().getInputStream().available() <= 0) {
                return;
            }
            if (io.blocking()) {
                channel.configureBlocking(false);
            }
            scratch = DISCARD.take();
            for (int i = 0; i < 16 && channel.read(scratch) > 0; i++) {
                scratch.clear();
            }
        } catch (IOException e) {
            LOG.debug("discarding unread input from {} failed", io.peer(), e);
        } finally {
            if (scratch != null) {
                DISCARD.give(scratch);
            }
            readLock.unlock();
        }
    }
}
