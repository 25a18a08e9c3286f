package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doCallRealMethod;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.testkit.ScriptedPeer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mockito.InOrder;

/** The server side of the session protocol against Mockito mocks of {@link Communicator}. */
@Timeout(10)
class SessionDispatcherTest {
    private final SessionDispatcher dispatcher = SessionDispatcher.standard(Duration.ZERO, null);

    @Test
    void echoWritesBackWhatItReadsAndSyncsEachTime() throws IOException {
        byte[] payload = "hello world".getBytes(StandardCharsets.UTF_8);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.echo().encode(),
                ByteBuffer.wrap(payload)), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        assertEquals(SessionReply.ok(), readReply(out));
        assertArrayEquals(payload, remaining(out));
        InOrder order = inOrder(peer.communicator());
        order.verify(peer.communicator()).write(any());
        order.verify(peer.communicator()).sync();
        order.verify(peer.communicator()).read(any());
        order.verify(peer.communicator()).write(any());
        order.verify(peer.communicator()).sync();
        order.verify(peer.communicator()).close();
    }

    @Test
    void echoReturnsEveryByteInOrderDespiteShortReads() throws IOException {
        byte[] payload = new byte[200_000];
        new Random(7).nextBytes(payload);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.echo().encode(),
                ByteBuffer.wrap(payload)), 977);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        assertEquals(SessionStatus.OK, readReply(out).status());
        assertArrayEquals(payload, remaining(out));
    }

    @Test
    void sinkConsumesTheAnnouncedBytesAndAcknowledgesTheCount() throws IOException {
        int total = 300_000;
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.sink(total).encode(),
                ByteBuffer.allocate(total)), 8191);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        assertEquals(SessionStatus.OK, readReply(out).status());
        assertEquals(SessionProtocol.SINK_ACK_MAGIC, out.getInt());
        assertEquals(total, out.getLong());
        assertEquals(0, out.remaining());
        assertEquals(SessionProtocol.REQUEST_HEADER_LENGTH + 8 + total, peer.consumed());
    }

    @Test
    void sinkAcknowledgesOnlyTheAnnouncedTotalThenWaitsForTheEndOfStream() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.sink(1000).encode(),
                ByteBuffer.allocate(1500)), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        readReply(out);
        out.getInt();
        assertEquals(1000, out.getLong());
        assertEquals(SessionProtocol.REQUEST_HEADER_LENGTH + 8 + 1500, peer.consumed());
        InOrder order = inOrder(peer.communicator());
        order.verify(peer.communicator(), atLeastOnce()).sync();
        order.verify(peer.communicator(), atLeastOnce()).read(any());
        order.verify(peer.communicator()).close();
    }

    @Test
    void sinkCutShortAcknowledgesWhatArrived() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.sink(1000).encode(),
                ByteBuffer.allocate(400)), 64);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        readReply(out);
        assertEquals(SessionProtocol.SINK_ACK_MAGIC, out.getInt());
        assertEquals(400, out.getLong());
    }

    @Test
    void badMagicIsRefusedAndTheSessionClosed() throws IOException {
        byte[] garbage = "GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        ScriptedPeer peer = new ScriptedPeer(garbage, Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        SessionReply reply = readReply(peer.written());
        assertEquals(SessionStatus.BAD_MAGIC, reply.status());
        assertTrue(reply.message().contains("0x47455420"), reply.message());
        verify(peer.communicator(), atLeastOnce()).close();
    }

    @Test
    void otherVersionIsRefusedNamingBothVersions() throws IOException {
        ByteBuffer request = SessionRequest.echo().encode();
        request.putShort(4, (short) 9);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(request), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        SessionReply reply = readReply(peer.written());
        assertEquals(SessionStatus.BAD_VERSION, reply.status());
        assertTrue(reply.message().contains("version 9") && reply.message().contains("version 1"),
                reply.message());
    }

    @Test
    void unknownExchangeIsRefusedNamingTheId() throws IOException {
        ByteBuffer request = SessionRequest.echo().encode();
        request.putShort(6, (short) 99);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(request), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        SessionReply reply = readReply(peer.written());
        assertEquals(SessionStatus.UNKNOWN_EXCHANGE, reply.status());
        assertTrue(reply.message().contains("99") && reply.message().contains("ECHO=1"), reply.message());
    }

    @Test
    void oversizedRequestIsRefusedWithoutReadingItsParameters() throws IOException {
        ByteBuffer request = SessionRequest.echo().encode();
        request.putInt(8, 1 << 20);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(request, ByteBuffer.allocate(1 << 20)),
                Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        SessionReply reply = readReply(peer.written());
        assertEquals(SessionStatus.REQUEST_TOO_LARGE, reply.status());
        assertTrue(reply.message().contains("1048576"), reply.message());
        assertEquals(SessionProtocol.REQUEST_HEADER_LENGTH, peer.consumed());
    }

    @Test
    void truncatedRequestIsRefusedSayingHowMuchArrived() throws IOException {
        byte[] partial = new byte[5];
        SessionRequest.echo().encode().get(partial);
        ScriptedPeer peer = new ScriptedPeer(partial, 2);

        dispatcher.serve(peer.communicator());

        SessionReply reply = readReply(peer.written());
        assertEquals(SessionStatus.TRUNCATED, reply.status());
        assertTrue(reply.message().contains("5 of 12"), reply.message());
    }

    @Test
    void wrongParameterLengthIsRefused() throws IOException {
        ByteBuffer request = ByteBuffer.allocate(16).putInt(SessionProtocol.REQUEST_MAGIC)
                .putShort((short) SessionProtocol.VERSION).putShort((short) Exchange.SINK.id()).putInt(4).putInt(7)
                .flip();
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(request), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        SessionReply reply = readReply(peer.written());
        assertEquals(SessionStatus.BAD_PARAMETERS, reply.status());
        assertTrue(reply.message().contains("takes 8 bytes"), reply.message());
    }

    @Test
    void sinkTotalBeyondLongRangeIsRefused() throws IOException {
        ByteBuffer request = SessionRequest.sink(0).encode();
        request.putLong(SessionProtocol.REQUEST_HEADER_LENGTH, -1L);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(request), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        assertEquals(SessionStatus.BAD_PARAMETERS, readReply(peer.written()).status());
    }

    @Test
    void exchangeWithoutHandlerIsRefusedAsUnknown() throws IOException {
        SessionDispatcher echoOnly = SessionDispatcher.of(Map.of(Exchange.ECHO, new EchoHandler()), Duration.ZERO,
                null);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.sink(10).encode()),
                Integer.MAX_VALUE);

        echoOnly.serve(peer.communicator());

        SessionReply reply = readReply(peer.written());
        assertEquals(SessionStatus.UNKNOWN_EXCHANGE, reply.status());
        assertTrue(reply.message().contains("SINK"), reply.message());
    }

    @Test
    void handlerGetsTheDecodedRequestAndItsFailureClosesThePeer() throws IOException {
        ExchangeHandler failing = (p, r) -> {
            assertEquals(12345, r.sinkTotal());
            throw new IOException("disk full");
        };
        SessionDispatcher d = SessionDispatcher.of(Map.of(Exchange.SINK, failing), Duration.ZERO, null);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.sink(12345).encode()),
                Integer.MAX_VALUE);

        IOException e = assertThrows(IOException.class, () -> d.serve(peer.communicator()));

        assertEquals("disk full", e.getMessage());
        verify(peer.communicator()).close();
    }

    @Test
    void silentClientIsRefusedWhenTheRequestTimeoutExpires() throws Exception {
        Communicator peer = mock(Communicator.class);
        when(peer.peerName()).thenReturn("silent-peer");
        when(peer.endpoint()).thenReturn(Endpoint.parse("tcp://127.0.0.1:9999"));
        CountDownLatch closed = new CountDownLatch(1);
        doAnswer(inv -> {
            closed.countDown();
            return null;
        }).when(peer).close();
        doAnswer(inv -> {
            if (!closed.await(5, TimeUnit.SECONDS)) {
                throw new AssertionError("the request timeout did not close the peer");
            }
            throw new AsynchronousCloseException();
        }).when(peer).read(any());
        doCallRealMethod().when(peer).readFully(any());
        ByteBuffer[] reply = new ByteBuffer[1];
        doAnswer(inv -> {
            ByteBuffer src = inv.getArgument(0);
            reply[0] = ByteBuffer.allocate(src.remaining()).put(src).flip();
            return null;
        }).when(peer).write(any());
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try {
            SessionDispatcher.standard(Duration.ofMillis(100), timer).serve(peer);
        } finally {
            timer.shutdownNow();
        }

        SessionReply r = readReply(reply[0]);
        assertEquals(SessionStatus.TRUNCATED, r.status());
        assertTrue(r.message().contains("100 ms"), r.message());
        verify(peer, atLeastOnce()).close();
    }

    @Test
    void refusalThatCannotBeDeliveredStillClosesThePeer() throws IOException {
        Communicator peer = mock(Communicator.class);
        when(peer.peerName()).thenReturn("gone-peer");
        doAnswer(inv -> {
            throw new IOException("broken pipe");
        }).when(peer).write(any());

        SessionDispatcher.refuse(peer, SessionStatus.BUSY, "full");

        verify(peer).close();
        verify(peer, never()).sync();
    }

    private static SessionReply readReply(ByteBuffer out) throws IOException {
        ScriptedPeer reader = new ScriptedPeer(remaining(out.duplicate()), Integer.MAX_VALUE);
        SessionReply reply = SessionReply.read(reader.communicator());
        out.position(out.position() + reader.consumed());
        return reply;
    }

    private static byte[] remaining(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return bytes;
    }
}
