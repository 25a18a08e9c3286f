package io.rdmacomm.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyShort;
import static org.mockito.ArgumentMatchers.isNull;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.rdmacomm.api.TransportUnavailableException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mockito.ArgumentCaptor;

/**
 * rdma-cm connection setup against DiSNI stand-ins: the provider's own deadline, error events that fail at once,
 * and cleanup of everything made so far. The events come from a mocked event channel read by the real
 * {@code rdmacomm-rdma-verbs-cm} thread.
 */
@Timeout(30)
class VerbsConnectionSetupTest {
    private static final Settings SMALL = new Settings(8, 4, 2, 128);
    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 7471);
    private static final VerbsProbe AVAILABLE = new VerbsProbe(() -> { }, () -> { }, () -> List.of("rxe0"),
            () -> true, () -> true, "/test");

    private final BlockingQueue<RdmaCmEvent> events = new LinkedBlockingQueue<>();
    private final List<DisniBoundary> connections = new CopyOnWriteArrayList<>();
    private RdmaEventChannel eventChannel;
    private Verbs.Cm cm;
    private CountDownLatch channelDestroyed;

    @BeforeEach
    void setUp() throws IOException {
        eventChannel = mock(RdmaEventChannel.class);
        channelDestroyed = new CountDownLatch(1);
        when(eventChannel.getCmEvent(anyInt())).thenAnswer(inv -> events.poll((int) inv.getArgument(0),
                TimeUnit.MILLISECONDS));
        doAnswer(inv -> {
            channelDestroyed.countDown();
            return 0;
        }).when(eventChannel).destroyEventChannel();
        cm = mock(Verbs.Cm.class);
        when(cm.openEventChannel()).thenReturn(eventChannel);
        when(cm.createQueuePair(any(), any())).thenAnswer(inv -> {
            DisniBoundary d = new DisniBoundary();
            connections.add(d);
            return d.verbs;
        });
    }

    @AfterEach
    void noThreadOutlivesTheTest() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (cmOrProgressThreadAlive()) {
            assertTrue(System.nanoTime() < deadline, "a verbs thread outlived close");
            Thread.onSpinWait();
        }
    }

    private static boolean cmOrProgressThreadAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().startsWith("rdmacomm-rdma-verbs-"));
    }

    private static RdmaCmEvent event(EventType type, RdmaCmId listenId, RdmaCmId connId) {
        RdmaCmEvent e = mock(RdmaCmEvent.class);
        when(e.getEvent()).thenReturn(type.ordinal());
        when(e.getListenIdPriv()).thenReturn(listenId);
        when(e.getConnIdPriv()).thenReturn(connId);
        return e;
    }

    /** A client cm id whose steps answer with the given events (null: the step stays silent). */
    private RdmaCmId clientId(EventType onResolveAddr, EventType onResolveRoute, EventType onConnect)
            throws IOException {
        RdmaCmId id = mock(RdmaCmId.class);
        when(eventChannel.createId(anyShort())).thenReturn(id);
        if (onResolveAddr != null) {
            doAnswer(inv -> events.add(event(onResolveAddr, null, id))).when(id).resolveAddr(isNull(), any(),
                    anyInt());
        }
        if (onResolveRoute != null) {
            doAnswer(inv -> events.add(event(onResolveRoute, null, id))).when(id).resolveRoute(anyInt());
        }
        if (onConnect != null) {
            doAnswer(inv -> events.add(event(onConnect, null, id))).when(id).connect(any());
        }
        return id;
    }

    private VerbsProvider provider() {
        return new VerbsProvider(AVAILABLE, cm, SMALL);
    }

    private static final ChannelHandler IGNORE = new ChannelHandler() {
        @Override
        public void onMessage(ByteBuffer message) {
        }

        @Override
        public void onError(IOException cause) {
        }
    };

    @Test
    void aSilentPeerTimesOutOnOurDeadlineAndEverythingIsDestroyed() throws Exception {
        RdmaCmId id = clientId(null, null, null);
        long start = System.nanoTime();
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
                () -> provider().connect(PEER, Duration.ofMillis(300), IGNORE));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMillis >= 250 && tookMillis < 5000, "took " + tookMillis + " ms");
        assertTrue(e.getMessage().contains("127.0.0.1:7471") && e.getMessage().contains("RDMA_CM_EVENT_ADDR_RESOLVED")
                && e.getMessage().contains("300 ms"), e.getMessage());
        verify(id).destroyId();
        assertTrue(channelDestroyed.await(5, TimeUnit.SECONDS), "event channel destroyed");
        verify(cm, never()).createQueuePair(any(), any());
    }

    @Test
    void aRejectionFailsAtOnceAsConnectExceptionAndDestroysTheQueuePair() throws Exception {
        RdmaCmId id = clientId(EventType.RDMA_CM_EVENT_ADDR_RESOLVED, EventType.RDMA_CM_EVENT_ROUTE_RESOLVED,
                EventType.RDMA_CM_EVENT_REJECTED);
        long start = System.nanoTime();
        ConnectException e = assertThrows(ConnectException.class,
                () -> provider().connect(PEER, Duration.ofSeconds(20), IGNORE));
        assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) < 10, "failed on the event, not late");
        assertTrue(e.getMessage().contains("refused") && e.getMessage().contains("127.0.0.1:7471"), e.getMessage());
        ArgumentCaptor<RdmaConnParam> param = ArgumentCaptor.forClass(RdmaConnParam.class);
        verify(id).connect(param.capture());
        assertEquals(7, param.getValue().getRetry_count());
        assertEquals(7, param.getValue().getRnr_retry_count());
        assertEquals(1, connections.size());
        verify(connections.get(0).verbs).destroy();
        assertEquals(8, connections.get(0).recvWrs.size(), "receives were pre-posted before connecting");
        assertTrue(channelDestroyed.await(5, TimeUnit.SECONDS));
    }

    @Test
    void anAddressErrorIsAConnectExceptionNamingTheStep() throws Exception {
        RdmaCmId id = clientId(EventType.RDMA_CM_EVENT_ADDR_ERROR, null, null);
        ConnectException e = assertThrows(ConnectException.class,
                () -> provider().connect(PEER, Duration.ofSeconds(20), IGNORE));
        assertTrue(e.getMessage().contains("RDMA_CM_EVENT_ADDR_ERROR"), e.getMessage());
        verify(id).destroyId();
    }

    @Test
    void establishedConnectionRunsUntilThePeerDisconnectsAndCloseStopsItsThreads() throws Exception {
        RdmaCmId id = clientId(EventType.RDMA_CM_EVENT_ADDR_RESOLVED, EventType.RDMA_CM_EVENT_ROUTE_RESOLVED,
                EventType.RDMA_CM_EVENT_ESTABLISHED);
        CountDownLatch error = new CountDownLatch(1);
        List<IOException> errors = new ArrayList<>();
        RdmaChannel ch = provider().connect(PEER, Duration.ofSeconds(20), new ChannelHandler() {
            @Override
            public void onMessage(ByteBuffer message) {
            }

            @Override
            public void onError(IOException cause) {
                errors.add(cause);
                error.countDown();
            }
        });
        assertEquals("127.0.0.1:7471", ch.peerName());
        assertTrue(Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("rdmacomm-rdma-verbs-progress")), "progress thread started");
        events.add(event(EventType.RDMA_CM_EVENT_DISCONNECTED, null, id));
        assertTrue(error.await(5, TimeUnit.SECONDS));
        assertTrue(errors.get(0).getMessage().contains("closed the RDMA connection"));
        ch.close();
        verify(connections.get(0).verbs).destroy();
        assertTrue(channelDestroyed.await(5, TimeUnit.SECONDS));
    }

    @Test
    void ipv6IsRefusedBeforeAnythingNativeHappens() throws Exception {
        ConnectException e = assertThrows(ConnectException.class,
                () -> provider().connect(new InetSocketAddress("::1", 7471), Duration.ofSeconds(1), IGNORE));
        assertTrue(e.getMessage().contains("IPv4"), e.getMessage());
        verify(cm, never()).openEventChannel();
    }

    @Test
    void anUnavailableProviderSaysWhyInsteadOfConnecting() throws IOException {
        VerbsProbe missing = new VerbsProbe(() -> {
            throw new UnsatisfiedLinkError("no disni in java.library.path: /x");
        }, () -> { }, List::of, () -> true, () -> true, "/x");
        VerbsProvider p = new VerbsProvider(missing, cm, SMALL);
        assertEquals("verbs", p.name());
        TransportUnavailableException e = assertThrows(TransportUnavailableException.class,
                () -> p.connect(PEER, Duration.ofSeconds(1), IGNORE));
        assertTrue(e.getMessage().contains("not on java.library.path (/x)"), e.getMessage());
        assertThrows(TransportUnavailableException.class, () -> p.listen(PEER, c -> IGNORE));
        verify(cm, never()).openEventChannel();
    }

    @Test
    void aPeerThatNeverCompletesIsDroppedAfterTheEstablishTimeoutAndOthersAreStillServed() throws Exception {
        RdmaCmId listenId = mock(RdmaCmId.class);
        when(eventChannel.createId(anyShort())).thenReturn(listenId);
        List<RdmaChannel> accepted = new ArrayList<>();
        CountDownLatch acceptedLatch = new CountDownLatch(1);
        VerbsListener listener = VerbsListener.open(cm, SMALL, new InetSocketAddress("127.0.0.1", 0), ch -> {
            accepted.add(ch);
            acceptedLatch.countDown();
            return IGNORE;
        }, TimeUnit.MILLISECONDS.toNanos(200));
        RdmaCmId silent = mock(RdmaCmId.class);
        events.add(event(EventType.RDMA_CM_EVENT_CONNECT_REQUEST, listenId, silent));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (connections.isEmpty()) {
            assertTrue(System.nanoTime() < deadline, "the connect request was not handled");
            Thread.onSpinWait();
        }
        assertTrue(connections.get(0).destroyed.await(5, TimeUnit.SECONDS),
                "the silent peer's half-open connection was not dropped");
        verify(silent).accept(any());
        RdmaCmId good = mock(RdmaCmId.class);
        doAnswer(inv -> events.add(event(EventType.RDMA_CM_EVENT_ESTABLISHED, null, good))).when(good).accept(any());
        events.add(event(EventType.RDMA_CM_EVENT_CONNECT_REQUEST, listenId, good));
        assertTrue(acceptedLatch.await(5, TimeUnit.SECONDS));
        assertEquals(1, accepted.size());
        accepted.get(0).close();
        listener.close();
        assertTrue(channelDestroyed.await(5, TimeUnit.SECONDS));
    }

    @Test
    void listenerAcceptsAfterEstablishedAndKeepsServingWhenARequestFails() throws Exception {
        RdmaCmId listenId = mock(RdmaCmId.class);
        when(eventChannel.createId(anyShort())).thenReturn(listenId);
        when(listenId.getSource()).thenReturn(new InetSocketAddress("127.0.0.1", 40001));
        List<RdmaChannel> accepted = new ArrayList<>();
        CountDownLatch acceptedLatch = new CountDownLatch(1);
        VerbsListener listener = provider().listen(new InetSocketAddress("127.0.0.1", 0), ch -> {
            accepted.add(ch);
            acceptedLatch.countDown();
            return IGNORE;
        });
        assertEquals(40001, listener.address().getPort());
        verify(listenId).bindAddr(new InetSocketAddress("127.0.0.1", 0));

        RdmaCmId failing = mock(RdmaCmId.class);
        CountDownLatch firstAccepted = new CountDownLatch(1);
        doAnswer(inv -> {
            firstAccepted.countDown();
            events.add(event(EventType.RDMA_CM_EVENT_CONNECT_ERROR, null, failing));
            return null;
        }).when(failing).accept(any());
        events.add(event(EventType.RDMA_CM_EVENT_CONNECT_REQUEST, listenId, failing));
        assertTrue(firstAccepted.await(5, TimeUnit.SECONDS));

        RdmaCmId good = mock(RdmaCmId.class);
        when(good.getDestination()).thenReturn(new InetSocketAddress("127.0.0.1", 51000));
        doAnswer(inv -> events.add(event(EventType.RDMA_CM_EVENT_ESTABLISHED, null, good))).when(good).accept(any());
        events.add(event(EventType.RDMA_CM_EVENT_CONNECT_REQUEST, listenId, good));
        assertTrue(acceptedLatch.await(5, TimeUnit.SECONDS));
        assertEquals(1, accepted.size(), "only the established connection reaches the handler");
        assertEquals("127.0.0.1:51000", accepted.get(0).peerName());
        assertEquals(2, connections.size());
        verify(connections.get(0).verbs).destroy();
        verify(connections.get(1).verbs, never()).destroy();

        listener.close();
        verify(listenId).destroyId();
        // release() joins the cm thread, which destroys the channel, so a last release would show here already
        verify(eventChannel, never()).destroyEventChannel();
        accepted.get(0).close();
        verify(connections.get(1).verbs).destroy();
        assertTrue(channelDestroyed.await(5, TimeUnit.SECONDS));
    }
}
