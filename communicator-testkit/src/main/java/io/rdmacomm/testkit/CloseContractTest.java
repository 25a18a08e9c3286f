package io.rdmacomm.testkit;

import static io.rdmacomm.testkit.Harness.assertBytes;
import static io.rdmacomm.testkit.Harness.awaitBlocked;
import static io.rdmacomm.testkit.Harness.failureOf;
import static io.rdmacomm.testkit.Harness.random;
import static io.rdmacomm.testkit.Harness.readN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.testkit.Harness.Pair;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The close part of the stream contract of {@link Communicator}, and the per-test harness both parts share. The
 * tests: the end of stream after a clean or a mid-stream close, I/O after close, a close that releases a read, an
 * accept or a write blocked in another thread, and no transport thread outliving the close. Not a kit of its own:
 * {@link CommunicatorContractTest} extends it, so that every transport's one-line subclass of that kit runs these
 * tests with the rest of the stream contract (and they are reported under that subclass).
 *
 * <p>Every test closes all it opened, then checks that no thread of the transport ({@code rdmacomm-<scheme>-*})
 * outlives the close.
 */
abstract class CloseContractTest {
    static final int MIB = 1 << 20;
    static final Duration BLOCK_WAIT = Duration.ofSeconds(5);
    static final Duration THREAD_DEADLINE = Duration.ofSeconds(5);

    final TransportUnderTest transport;
    /** The harness of the test running: opened before each test, closed after it. */
    Harness h;

    CloseContractTest(TransportUnderTest transport) {
        this.transport = Objects.requireNonNull(transport, "transport");
    }

    @BeforeEach
    void openHarness() {
        h = new Harness(transport);
        h.assumeAvailable();
    }

    @AfterEach
    void closeEverythingAndCheckThreads() throws Exception {
        h.close();
        Harness.assertNoThreads(transport.threadPrefix(), THREAD_DEADLINE);
    }

    @Test
    @Timeout(30)
    void readReturnsMinusOneAfterCleanPeerCloseAndKeepsReturningIt() throws Exception {
        Pair p = h.pair();
        byte[] msg = random(11, 3000);
        p.client().write(ByteBuffer.wrap(msg));
        p.client().close();
        assertBytes(msg, readN(p.accepted(), msg.length), "bytes written before close");
        assertEquals(-1, p.accepted().read(ByteBuffer.allocate(10)), "read after the peer closed");
        assertEquals(-1, p.accepted().read(ByteBuffer.allocate(10)), "next read after the peer closed");
    }

    @Test
    @Timeout(30)
    void ioAfterCloseThrowsClosedChannelExceptionAndCloseIsIdempotent() throws Exception {
        Pair p = h.pair();
        Communicator c = p.client();
        c.close();
        c.close();
        assertFalse(c.isOpen());
        assertThrows(ClosedChannelException.class, () -> c.read(ByteBuffer.allocate(1)));
        assertThrows(ClosedChannelException.class, () -> c.readFully(ByteBuffer.allocate(1)));
        assertThrows(ClosedChannelException.class, () -> c.write(ByteBuffer.allocate(1)));
        assertThrows(ClosedChannelException.class, c::sync);
        p.server().close();
        p.server().close();
        assertFalse(p.server().isOpen());
        assertThrows(ClosedChannelException.class, p.server()::accept);
        assertTrue(p.accepted().isOpen(), "closing the server leaves accepted connections open");
        p.accepted().close();
        assertThrows(ClosedChannelException.class, () -> p.accepted().write(ByteBuffer.allocate(1)));
    }

    @Test
    @Timeout(30)
    void asyncCloseUnblocksABlockedRead() throws Exception {
        Pair p = h.pair();
        AtomicReference<Thread> reader = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Future<Integer> read = h.async(() -> {
            reader.set(Thread.currentThread());
            started.countDown();
            return p.accepted().read(ByteBuffer.allocate(16));
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        awaitBlocked(reader.get(), "read", BLOCK_WAIT);
        p.accepted().close();
        assertInstanceOf(AsynchronousCloseException.class, failureOf(read, BLOCK_WAIT));
    }

    @Test
    @Timeout(30)
    void asyncCloseUnblocksABlockedAccept() throws Exception {
        Communicator server = h.serve();
        AtomicReference<Thread> acceptor = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Future<Communicator> accept = h.async(() -> {
            acceptor.set(Thread.currentThread());
            started.countDown();
            return h.track(server.accept());
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        awaitBlocked(acceptor.get(), "accept", BLOCK_WAIT);
        server.close();
        assertInstanceOf(AsynchronousCloseException.class, failureOf(accept, BLOCK_WAIT));
    }

    @Test
    @Timeout(30)
    void asyncCloseUnblocksAWriteBlockedByBackpressure() throws Exception {
        Pair p = h.pair();
        AtomicReference<Thread> writer = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Future<Void> write = h.async(() -> {
            ByteBuffer chunk = ByteBuffer.allocateDirect(MIB);
            writer.set(Thread.currentThread());
            started.countDown();
            // The peer never reads, so sooner or later a write blocks; close must release it.
            while (true) {
                p.client().write(chunk.clear());
                p.client().sync();
            }
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        awaitBlocked(writer.get(), "write", Duration.ofSeconds(15));
        p.client().close();
        assertInstanceOf(AsynchronousCloseException.class, failureOf(write, BLOCK_WAIT));
    }

    @Test
    @Timeout(30)
    void midStreamCloseDeliversWhatWasWrittenThenEndOfStream() throws Exception {
        Pair p = h.pair();
        Communicator dying = Faults.closeAfterBytes(p.client(), 1000);
        byte[] msg = random(14, 3000);
        assertThrows(IOException.class, () -> dying.write(ByteBuffer.wrap(msg)));
        assertFalse(p.client().isOpen());
        ByteBuffer dst = ByteBuffer.allocate(msg.length);
        assertThrows(EOFException.class, () -> p.accepted().readFully(dst));
        assertEquals(1000, dst.position(), "bytes delivered before the mid-stream close");
        byte[] got = new byte[1000];
        dst.flip().get(got);
        assertBytes(Arrays.copyOf(msg, 1000), got, "bytes before the mid-stream close");
    }

    @Test
    @Timeout(30)
    void noTransportThreadOutlivesClose() throws Exception {
        Communicator server = h.serve();
        List<Pair> pairs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Pair p = h.pair(server);
            Harness.assertUsable(p);
            pairs.add(p);
        }
        for (Pair p : pairs) {
            p.client().close();
            p.accepted().close();
        }
        server.close();
        Harness.assertNoThreads(transport.threadPrefix(), THREAD_DEADLINE);
    }
}
