package io.rdmacomm.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;

/** {@link AcceptGuard} against a listener whose accepts fail on cue. */
@Timeout(30)
class AcceptGuardTest {
    private static final String EMFILE = "Too many open files";
    private final AtomicInteger warnings = new AtomicInteger();
    private final Logger log = (Logger) Proxy.newProxyInstance(Logger.class.getClassLoader(),
            new Class<?>[] {Logger.class}, (proxy, method, args) -> {
                if (method.getName().equals("warn")) {
                    warnings.incrementAndGet();
                }
                return method.getReturnType() == boolean.class ? Boolean.TRUE : null;
            });
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    /**
     * A listener that plays a script: each accept takes the next entry, throwing it if it is an exception and
     * returning it if it is a channel; an empty script means no peer is waiting.
     */
    static final class ScriptedListener extends ServerSocketChannel {
        final Deque<Object> script = new ArrayDeque<>();
        int accepts;

        ScriptedListener() {
            super(SelectorProvider.provider());
        }

        @Override
        public SocketChannel accept() throws IOException {
            accepts++;
            Object next = script.poll();
            if (next instanceof IOException e) {
                throw e;
            }
            return (SocketChannel) next;
        }

        @Override
        public ServerSocketChannel bind(SocketAddress local, int backlog) {
            throw new UnsupportedOperationException("not in this test");
        }

        @Override
        public <T> ServerSocketChannel setOption(SocketOption<T> name, T value) {
            throw new UnsupportedOperationException("not in this test");
        }

        @Override
        public <T> T getOption(SocketOption<T> name) {
            throw new UnsupportedOperationException("not in this test");
        }

        @Override
        public Set<SocketOption<?>> supportedOptions() {
            return Set.of();
        }

        @Override
        public ServerSocket socket() {
            throw new UnsupportedOperationException("not in this test");
        }

        @Override
        public SocketAddress getLocalAddress() {
            return null;
        }

        @Override
        protected void implCloseSelectableChannel() {
        }

        @Override
        protected void implConfigureBlocking(boolean block) {
        }
    }

    /** Waits out the guard's back-off (a timer, not a synchronisation). */
    private static void waitOut(AcceptGuard guard) {
        for (long left; (left = guard.backoffNanos()) > 0; ) {
            LockSupport.parkNanos(left);
        }
    }

    /** A connected pair on loopback: [0] the accepted end, [1] the connecting end. */
    private SocketChannel[] pair() throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            SocketChannel accepted = server.accept();
            toClose.add(client);
            toClose.add(accepted);
            return new SocketChannel[] {accepted, client};
        }
    }

    @Test
    void backOffGrowsWhileAcceptsFailAndResetsAtTheFirstSuccess() throws Exception {
        int n = 6;
        ScriptedListener listener = new ScriptedListener();
        for (int i = 0; i < n; i++) {
            listener.script.add(new IOException("No buffer space available"));
        }
        SocketChannel peer = pair()[0];
        listener.script.add(peer);
        listener.script.add(new IOException("No buffer space available"));
        long start = System.nanoTime();
        try (AcceptGuard guard = new AcceptGuard("test://listener", log, null)) {
            long expected = AcceptGuard.BACKOFF_MIN_NANOS;
            for (int i = 0; i < n; i++) {
                assertNull(guard.accept(listener), "failure " + (i + 1) + " gives no peer");
                assertEquals(expected, guard.backoffStepNanos(), "the back-off after failure " + (i + 1));
                assertTrue(guard.backoffNanos() <= expected);
                expected = Math.min(AcceptGuard.BACKOFF_MAX_NANOS, expected * 2);
                waitOut(guard);
            }
            assertEquals(n, guard.failures());
            assertEquals(n, listener.accepts, "one accept per failure: none while backing off");
            assertSame(peer, guard.accept(listener), "the first accept after the failures succeeds");
            assertEquals(0, guard.backoffNanos());
            assertEquals(0, guard.backoffStepNanos());
            assertNull(guard.accept(listener));
            assertEquals(AcceptGuard.BACKOFF_MIN_NANOS, guard.backoffStepNanos(),
                    "the back-off starts again from the minimum after a success");
            assertEquals(n + 1, guard.failures());
            assertEquals(0, guard.refused(), "nothing is refused unless descriptors ran out");
        }
        long elapsedSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertTrue(warnings.get() >= 1, "the failures are logged");
        assertTrue(warnings.get() <= 1 + elapsedSeconds && warnings.get() < n + 1,
                warnings.get() + " lines for " + (n + 1) + " failures in " + elapsedSeconds + " s: at most one a second");
    }

    @Test
    void outOfDescriptorsRefusesTheNextWaitingPeerWithTheSpareDescriptor() throws Exception {
        SocketChannel[] waiting = pair();
        ScriptedListener listener = new ScriptedListener();
        listener.script.add(new IOException(EMFILE));
        listener.script.add(waiting[0]);
        List<String> reasons = new ArrayList<>();
        try (AcceptGuard guard = new AcceptGuard("test://listener", log, (peer, reason) -> {
            reasons.add(reason);
            peer.write(ByteBuffer.wrap(reason.getBytes(StandardCharsets.UTF_8)));
        })) {
            assertTrue(guard.holdsSpare());
            assertNull(guard.accept(listener));
            assertEquals(1, guard.failures());
            assertEquals(1, guard.refused());
            assertEquals(List.of("the server is out of file descriptors; try again later"), reasons);
            assertFalse(waiting[0].isOpen(), "the refused peer is closed");
            assertTrue(guard.holdsSpare(), "the spare descriptor is taken again");
            assertEquals(AcceptGuard.BACKOFF_MIN_NANOS, guard.backoffStepNanos(), "and backs off");
        }
        ByteBuffer got = ByteBuffer.allocate(200);
        while (waiting[1].read(got) >= 0) {
            // until the guard's close arrives
        }
        assertEquals("the server is out of file descriptors; try again later",
                new String(got.array(), 0, got.position(), StandardCharsets.UTF_8), "what the refused peer heard");
    }

    @Test
    void outOfDescriptorsAsksTheServerToMakeRoomAndTakesTheWaitingPeer() throws Exception {
        SocketChannel peer = pair()[0];
        ScriptedListener listener = new ScriptedListener();
        listener.script.add(new IOException(EMFILE));
        listener.script.add(peer);
        AtomicInteger asked = new AtomicInteger();
        try (AcceptGuard guard = new AcceptGuard("test://listener", log,
                (p, reason) -> {
                    throw new AssertionError("nobody is refused when the server made room");
                }, () -> asked.incrementAndGet() > 0)) {
            assertSame(peer, guard.accept(listener), "the waiting peer is taken once room was made");
            assertEquals(1, asked.get());
            assertEquals(1, guard.failures());
            assertEquals(0, guard.refused());
            assertEquals(0, guard.backoffNanos(), "no back-off: the retry succeeded");
            assertTrue(peer.isOpen());
        }
    }

    @Test
    void anyOtherFailureBacksOffTooAndOnlyAClosedListenerThrows() throws Exception {
        ScriptedListener listener = new ScriptedListener();
        listener.script.add(new IllegalStateException("a bug in the listener"));
        listener.script.add(new ClosedChannelException());
        try (AcceptGuard guard = new AcceptGuard("test://listener", log, null)) {
            assertNull(guard.accept(listener));
            assertEquals(1, guard.failures());
            assertEquals(AcceptGuard.BACKOFF_MIN_NANOS, guard.backoffStepNanos());
            waitOut(guard);
            assertThrows(ClosedChannelException.class, () -> guard.accept(listener));
        }
    }
}
