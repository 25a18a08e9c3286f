package io.rdmacomm.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.when;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/** The roles, close and checks every transport's communicator inherits, against a mocked connection. */
@Timeout(30)
class AbstractCommunicatorTest {
    private static final Endpoint REQUESTED = Endpoint.parse("tcp://127.0.0.1:0");
    private static final Endpoint BOUND = REQUESTED.withPort(4711);
    private static final RegionDescriptor REMOTE = new RegionDescriptor(1, 64, Access.readWrite(), new byte[8]);

    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final AbstractCommunicator.Link link = mock(AbstractCommunicator.Link.class);

    @AfterEach
    void stop() throws InterruptedException {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** What a test's dial does; it may use the communicator's hooks. */
    @FunctionalInterface
    private interface Dial {
        AbstractCommunicator.Link dial(Fake self) throws IOException;
    }

    /** A transport whose bind, accept and dial the test decides. */
    private static final class Fake extends AbstractCommunicator<AbstractCommunicator.Link> {
        final AtomicInteger listens = new AtomicInteger();
        final AtomicInteger stops = new AtomicInteger();
        final Communicator acceptedPeer = mock(Communicator.class);
        private final Dial dial;

        Fake(Dial dial) {
            super(REQUESTED);
            this.dial = dial;
        }

        Fake(AbstractCommunicator.Link accepted) {
            super(BOUND, accepted);
            this.dial = self -> {
                throw new AssertionError("an accepted communicator never dials");
            };
        }

        @Override
        protected Endpoint listen() {
            listens.incrementAndGet();
            return BOUND;
        }

        @Override
        protected Communicator acceptNext() {
            return acceptedPeer;
        }

        @Override
        protected AbstractCommunicator.Link dial() throws IOException {
            return dial.dial(this);
        }

        @Override
        protected void stopServing() {
            stops.incrementAndGet();
        }
    }

    private static void awaitInDial(CountDownLatch latch, String otherwise) throws InterruptedIOException {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError(otherwise);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(otherwise);
        }
    }

    /**
     * Connects {@code c} in another thread; once its dial counted {@code dialing} down, closes {@code c} and counts
     * {@code closed} down. Returns why the connect failed.
     */
    private Throwable connectClosedMidDial(Fake c, CountDownLatch dialing, CountDownLatch closed) throws Exception {
        Future<?> connect = pool.submit(() -> {
            c.connect();
            return null;
        });
        assertTrue(dialing.await(10, TimeUnit.SECONDS));
        c.close();
        closed.countDown();
        return assertThrows(ExecutionException.class, () -> connect.get(10, TimeUnit.SECONDS)).getCause();
    }

    private Fake connected() throws IOException {
        Fake c = new Fake(self -> link);
        c.connect();
        return c;
    }

    /** Every call that needs a connection. */
    private static List<Executable> connectedCalls(Communicator c) {
        return List.of(() -> c.read(ByteBuffer.allocate(1)), () -> c.write(ByteBuffer.allocate(1)), c::sync,
                () -> c.register(ByteBuffer.allocateDirect(8), Access.readWrite()),
                () -> c.put(ByteBuffer.allocate(1), REMOTE, 0), () -> c.get(REMOTE, 0, ByteBuffer.allocate(1)));
    }

    @Test
    void aNewCommunicatorNeitherServesNorIsConnected() {
        Fake c = new Fake(self -> link);
        assertEquals("unconnected", c.peerName());
        assertSame(REQUESTED, c.endpoint());
        for (Executable call : connectedCalls(c)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call);
            assertTrue(e.getMessage().contains(REQUESTED + " is not connected"), e.getMessage());
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, c::accept);
        assertEquals("accept() on " + REQUESTED + " before serve()", e.getMessage());
        assertTrue(c.isOpen());
        verifyNoInteractions(link);
    }

    @Test
    void serveReportsTheBoundEndpointAndForbidsASecondRole() throws Exception {
        Fake c = new Fake(self -> link);
        c.serve();
        assertSame(BOUND, c.endpoint());
        assertSame(c.acceptedPeer, c.accept());
        IllegalStateException twice = assertThrows(IllegalStateException.class, c::serve);
        assertEquals("serve() on " + BOUND + ", which serves already", twice.getMessage());
        IllegalStateException connect = assertThrows(IllegalStateException.class, c::connect);
        assertEquals("connect() on " + BOUND + ", which serves already", connect.getMessage());
        for (Executable call : connectedCalls(c)) {
            assertThrows(IllegalStateException.class, call);
        }
        assertEquals(1, c.listens.get());
        verifyNoInteractions(link);
    }

    @Test
    void aConnectedCommunicatorHandsEveryCallToItsLink() throws Exception {
        when(link.peerName()).thenReturn("10.0.0.2:5000");
        when(link.read(any())).thenReturn(7);
        MemoryRegion region = mock(MemoryRegion.class);
        when(link.register(any(), any())).thenReturn(region);
        Fake c = connected();
        ByteBuffer dst = ByteBuffer.allocate(8);
        ByteBuffer src = ByteBuffer.allocate(8);
        ByteBuffer memory = ByteBuffer.allocateDirect(8);
        assertEquals(7, c.read(dst));
        c.write(src);
        c.sync();
        assertSame(region, c.register(memory, Set.of(Access.REMOTE_READ)));
        c.put(src, REMOTE, 3);
        c.get(REMOTE, 4, dst);
        assertEquals("10.0.0.2:5000", c.peerName());
        verify(link).read(dst);
        verify(link).write(src);
        verify(link).sync();
        verify(link).register(memory, Set.of(Access.REMOTE_READ));
        verify(link).put(src, REMOTE, 3);
        verify(link).get(REMOTE, 4, dst);

        assertEquals("connect() on " + REQUESTED + ", which is connected already",
                assertThrows(IllegalStateException.class, c::connect).getMessage());
        assertThrows(IllegalStateException.class, c::serve);
        IllegalStateException accept = assertThrows(IllegalStateException.class, c::accept);
        assertTrue(accept.getMessage().contains("only a server accepts"), accept.getMessage());
    }

    @Test
    void anAcceptedCommunicatorIsConnectedAndNamesTheServerEndpoint() throws Exception {
        when(link.peerName()).thenReturn("10.0.0.3:6000");
        Fake accepted = new Fake(link);
        assertSame(BOUND, accepted.endpoint());
        assertEquals("10.0.0.3:6000", accepted.peerName());
        accepted.sync();
        verify(link).sync();
        assertThrows(IllegalStateException.class, accepted::connect);
        assertThrows(IllegalStateException.class, accepted::serve);
    }

    @Test
    void closeIsIdempotentAndEveryLaterCallIsAClosedChannelException() throws Exception {
        Fake c = connected();
        c.close();
        c.close();
        assertFalse(c.isOpen());
        verify(link, times(1)).close();
        for (Executable call : connectedCalls(c)) {
            assertThrows(ClosedChannelException.class, call);
        }
        assertThrows(ClosedChannelException.class, c::serve);
        assertThrows(ClosedChannelException.class, c::connect);
        assertThrows(ClosedChannelException.class, c::accept);
        assertEquals(0, c.stops.get(), "a client has nothing to stop serving");
    }

    @Test
    void closingAServerStopsServingOnce() throws Exception {
        Fake c = new Fake(self -> link);
        c.serve();
        c.close();
        c.close();
        assertEquals(1, c.stops.get());
        assertThrows(ClosedChannelException.class, c::accept);
        verifyNoInteractions(link);
    }

    @Test
    void aFailedDialLeavesTheCommunicatorNewSoConnectCanBeRetried() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        Fake c = new Fake(self -> {
            if (attempts.incrementAndGet() == 1) {
                throw new ConnectException("refused");
            }
            return link;
        });
        assertEquals("refused", assertThrows(ConnectException.class, c::connect).getMessage());
        assertEquals("unconnected", c.peerName());
        assertThrows(IllegalStateException.class, () -> c.read(ByteBuffer.allocate(1)));
        c.connect();
        c.sync();
        verify(link).sync();
    }

    @Test
    void aCloseDuringTheDialRunsItsAbortAndConnectEndsWithAsynchronousCloseException() throws Exception {
        CountDownLatch dialing = new CountDownLatch(1);
        CountDownLatch aborted = new CountDownLatch(1);
        Fake c = new Fake(self -> {
            self.abortDialWith(aborted::countDown);
            dialing.countDown();
            awaitInDial(aborted, "close never aborted the dial");
            throw new IOException("socket closed");
        });
        Future<?> connect = pool.submit(() -> {
            c.connect();
            return null;
        });
        assertTrue(dialing.await(10, TimeUnit.SECONDS));
        IllegalStateException meanwhile = assertThrows(IllegalStateException.class,
                () -> c.read(ByteBuffer.allocate(1)));
        assertTrue(meanwhile.getMessage().contains("is connecting"), meanwhile.getMessage());
        c.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> connect.get(10, TimeUnit.SECONDS));
        assertInstanceOf(AsynchronousCloseException.class, e.getCause());
        assertEquals("socket closed", e.getCause().getCause().getMessage());
        assertThrows(ClosedChannelException.class, c::connect);
    }

    @Test
    void aDialThatSucceedsDespiteACloseHasItsLinkClosed() throws Exception {
        CountDownLatch dialing = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        Fake c = new Fake(self -> {
            dialing.countDown();
            awaitInDial(closed, "the test never closed");
            return link;
        });
        assertInstanceOf(AsynchronousCloseException.class, connectClosedMidDial(c, dialing, closed));
        verify(link).close();
        assertEquals("unconnected", c.peerName());
    }

    @Test
    void anAbortNamedAfterTheCloseRunsAtOnce() throws Exception {
        CountDownLatch dialing = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        AtomicInteger aborts = new AtomicInteger();
        Fake c = new Fake(self -> {
            dialing.countDown();
            awaitInDial(closed, "the test never closed");
            self.abortDialWith(aborts::incrementAndGet);
            throw new AssertionError("abortDialWith must throw once the communicator is closed");
        });
        assertInstanceOf(AsynchronousCloseException.class, connectClosedMidDial(c, dialing, closed));
        assertEquals(1, aborts.get());
    }

    @Test
    void registerChecksItsArgumentsBeforeTheLinkSeesThem() throws Exception {
        Fake c = connected();
        IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
                () -> c.register(ByteBuffer.allocate(8), Access.readWrite()));
        assertTrue(heap.getMessage().contains("only direct buffers"), heap.getMessage());
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
                () -> c.register(ByteBuffer.allocateDirect(8), Set.of()));
        assertTrue(empty.getMessage().contains("empty access set"), empty.getMessage());
        ByteBuffer readOnly = ByteBuffer.allocateDirect(8).asReadOnlyBuffer();
        IllegalArgumentException writable = assertThrows(IllegalArgumentException.class,
                () -> c.register(readOnly, Set.of(Access.REMOTE_WRITE)));
        assertTrue(writable.getMessage().contains("read-only buffer cannot be registered for REMOTE_WRITE"),
                writable.getMessage());
        verify(link, never()).register(any(), any());

        c.register(readOnly, Set.of(Access.REMOTE_READ));
        verify(link).register(readOnly, Set.of(Access.REMOTE_READ));
    }

    @Test
    void getIntoAReadOnlyBufferIsRefusedBeforeTheLinkSeesIt() throws Exception {
        Fake c = connected();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.get(REMOTE, 0, ByteBuffer.allocate(8).asReadOnlyBuffer()));
        assertEquals("get into a read-only buffer", e.getMessage());
        verify(link, never()).get(any(), anyLong(), any());
    }
}
