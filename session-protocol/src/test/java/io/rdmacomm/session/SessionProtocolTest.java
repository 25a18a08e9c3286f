package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.inOrder;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.testkit.ScriptedPeer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mockito.InOrder;

/** The wire format, byte by byte, and the client side of the protocol against mocks. */
@Timeout(10)
class SessionProtocolTest {

    @Test
    void requestIsBigEndianMagicVersionExchangeLengthParams() {
        byte[] wire = bytes(SessionRequest.sink(0x0102030405060708L).encode());
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'Q', 0, 1, 0, 2, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8}, wire);
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'Q', 0, 1, 0, 1, 0, 0, 0, 0},
                bytes(SessionRequest.echo().encode()));
    }

    @Test
    void requestRoundTrips() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(bytes(SessionRequest.sink(1L << 40).encode()), 3);
        SessionRequest r = SessionRequest.read(peer.communicator());
        assertEquals(Exchange.SINK, r.exchange());
        assertEquals(1L << 40, r.sinkTotal());
    }

    @Test
    void negativeSinkTotalIsRejectedOnTheClientSide() {
        assertThrows(IllegalArgumentException.class, () -> SessionRequest.sink(-1));
    }

    @Test
    void replyCarriesStatusAndUtf8MessageCutToTheLimit() throws IOException {
        byte[] wire = bytes(new SessionReply(SessionStatus.BUSY, "ü").encode());
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'R', 0, 1, 0, 7, 0, 2, (byte) 0xc3, (byte) 0xbc}, wire);

        SessionReply longReply = new SessionReply(SessionStatus.BAD_PARAMETERS, "x".repeat(5000));
        SessionReply read = SessionReply.read(new ScriptedPeer(bytes(longReply.encode()), 100).communicator());
        assertEquals(SessionStatus.BAD_PARAMETERS, read.status());
        assertEquals(SessionProtocol.MAX_MESSAGE_LENGTH, read.message().length());
    }

    @Test
    void clientSendsTheRequestSyncsAndAcceptsOk() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(bytes(SessionReply.ok().encode()), Integer.MAX_VALUE);

        SessionClient.open(peer.communicator(), SessionRequest.sink(42));

        assertArrayEquals(bytes(SessionRequest.sink(42).encode()), bytes(peer.written()));
        InOrder order = inOrder(peer.communicator());
        order.verify(peer.communicator()).write(any());
        order.verify(peer.communicator()).sync();
        order.verify(peer.communicator()).read(any());
    }

    @Test
    void clientReportsARefusalWithTheServersReason() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(bytes(new SessionReply(SessionStatus.BUSY,
                "server is at its limit of 1 sessions").encode()), Integer.MAX_VALUE);

        SessionException e = assertThrows(SessionException.class,
                () -> SessionClient.open(peer.communicator(), SessionRequest.echo()));

        assertEquals(SessionStatus.BUSY, e.status());
        assertTrue(e.getMessage().contains("refused the ECHO session: BUSY: server is at its limit of 1 sessions"),
                e.getMessage());
    }

    @Test
    void clientStillReadsTheRefusalWhenTheServerClosedBeforeTakingTheRequest() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(bytes(new SessionReply(SessionStatus.BUSY, "full").encode()),
                Integer.MAX_VALUE);
        doThrow(new IOException("connection closed by the peer")).when(peer.communicator()).sync();

        SessionException e = assertThrows(SessionException.class,
                () -> SessionClient.open(peer.communicator(), SessionRequest.echo()));

        assertEquals(SessionStatus.BUSY, e.status());
    }

    @Test
    void clientReportsTheSendFailureWhenNoReplyCameEither() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(new byte[0], 1);
        doThrow(new IOException("broken pipe")).when(peer.communicator()).sync();

        IOException e = assertThrows(IOException.class,
                () -> SessionClient.open(peer.communicator(), SessionRequest.echo()));

        assertEquals("broken pipe", e.getMessage());
        assertEquals(1, e.getSuppressed().length);
    }

    @Test
    void clientRejectsAPeerThatIsNotAServercomm() throws IOException {
        ScriptedPeer peer = new ScriptedPeer("HTTP/1.1 400 Bad Request\r\n".getBytes(StandardCharsets.US_ASCII),
                Integer.MAX_VALUE);

        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> SessionClient.open(peer.communicator(), SessionRequest.echo()));

        assertTrue(e.getMessage().contains("got 0x48545450") && e.getMessage().contains("servercomm"),
                e.getMessage());
    }

    @Test
    void sinkAckRoundTripsAndAnythingElseIsNamed() throws IOException {
        ScriptedPeer writer = new ScriptedPeer(new byte[0], 1);
        SessionProtocol.writeSinkAck(writer.communicator(), 987_654_321L);
        assertEquals(987_654_321L,
                SessionProtocol.readSinkAck(new ScriptedPeer(bytes(writer.written()), 5).communicator()));

        ScriptedPeer wrong = new ScriptedPeer(bytes(SessionReply.ok().encode()), Integer.MAX_VALUE);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> SessionProtocol.readSinkAck(wrong.communicator()));
        assertTrue(e.getMessage().contains("0x52435352"), e.getMessage());
    }

    @Test
    void newExchangeRequestsHaveTheirDocumentedLayouts() {
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'Q', 0, 1, 0, 3, 0, 0, 0, 4, 0, 0, 1, 0},
                bytes(SessionRequest.send(256).encode()));
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'Q', 0, 1, 0, 5, 0, 0, 0, 0}, bytes(SessionRequest.oneSidedRead().encode()));
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'Q', 0, 1, 0, 6, 0, 0, 0, 8, 3, 's', 'u', 'm', 0, 0, 0, 5},
                bytes(SessionRequest.call("sum", 5).encode()));
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'Q', 0, 1, 0, 7, 0, 0, 0, 9, 2, 'g', '1', 0, 3, 0, 0, 0, 64},
                bytes(SessionRequest.allToAll("g1", 3, 64).encode()));
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'Q', 0, 1, 0, 8, 0, 0, 0, 8, 1, 'b', 0, 2, 0, 0, 0, 0},
                bytes(SessionRequest.broadcast("b", 2, 0).encode()));
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'Q', 0, 1, 0, 9, 0, 0, 0, 0}, bytes(SessionRequest.stats().encode()));
    }

    @Test
    void statsRequestRoundTripsAndTakesNoParameters() throws IOException {
        assertEquals(Exchange.STATS, SessionRequest.read(new ScriptedPeer(bytes(SessionRequest.stats().encode()), 5)
                .communicator()).exchange());
        ByteBuffer statsWithParams = ByteBuffer.allocate(13).put(bytes(SessionRequest.stats().encode()))
                .putInt(8, 1).put((byte) 0).flip();
        SessionException e = assertThrows(SessionException.class,
                () -> SessionRequest.read(new ScriptedPeer(bytes(statsWithParams), 100).communicator()));
        assertEquals(SessionStatus.BAD_PARAMETERS, e.status());
        assertTrue(e.getMessage().contains("STATS takes 0 bytes of parameters, got 1"), e.getMessage());
    }

    @Test
    void newExchangeRequestsRoundTrip() throws IOException {
        SessionRequest call = SessionRequest.read(new ScriptedPeer(bytes(SessionRequest.call("sha256", 77).encode()),
                2).communicator());
        assertEquals("sha256", call.routine());
        assertEquals(77, call.inputLength());
        SessionRequest group = SessionRequest.read(new ScriptedPeer(bytes(SessionRequest.allToAll("demo", 64, 100)
                .encode()), 3).communicator());
        assertEquals("demo", group.group());
        assertEquals(64, group.members());
        assertEquals(100, group.groupMessageSize());
        assertEquals(1L << 33, SessionRequest.read(new ScriptedPeer(
                bytes(SessionRequest.oneSidedWrite(1L << 33).encode()), 4).communicator()).writeTotal());
    }

    @Test
    void malformedParametersOfNewExchangesAreRefusedNamingTheProblem() {
        ByteBuffer badName = SessionRequest.allToAll("abc", 2, 8).encode();
        badName.put(SessionProtocol.REQUEST_HEADER_LENGTH + 1, (byte) '/');
        SessionException e = assertThrows(SessionException.class,
                () -> SessionRequest.read(new ScriptedPeer(bytes(badName), 100).communicator()));
        assertEquals(SessionStatus.BAD_PARAMETERS, e.status());
        assertTrue(e.getMessage().contains("'/bc' is invalid"), e.getMessage());

        ByteBuffer lyingLength = SessionRequest.call("echo", 0).encode();
        lyingLength.put(SessionProtocol.REQUEST_HEADER_LENGTH, (byte) 9);
        e = assertThrows(SessionException.class,
                () -> SessionRequest.read(new ScriptedPeer(bytes(lyingLength), 100).communicator()));
        assertEquals(SessionStatus.BAD_PARAMETERS, e.status());
        assertTrue(e.getMessage().contains("name of 9 bytes does not fit"), e.getMessage());

        ByteBuffer zeroMembers = SessionRequest.broadcast("b", 1, 0).encode();
        zeroMembers.putShort(SessionProtocol.REQUEST_HEADER_LENGTH + 2, (short) 0);
        e = assertThrows(SessionException.class,
                () -> SessionRequest.read(new ScriptedPeer(bytes(zeroMembers), 100).communicator()));
        assertTrue(e.getMessage().contains("0 members"), e.getMessage());

        ByteBuffer hugeContribution = SessionRequest.allToAll("a", 2, 8).encode();
        hugeContribution.putInt(SessionProtocol.REQUEST_HEADER_LENGTH + 4, SessionProtocol.MAX_GROUP_MESSAGE + 1);
        e = assertThrows(SessionException.class,
                () -> SessionRequest.read(new ScriptedPeer(bytes(hugeContribution), 100).communicator()));
        assertEquals(SessionStatus.REQUEST_TOO_LARGE, e.status());

        ByteBuffer readWithParams = ByteBuffer.allocate(13).put(bytes(SessionRequest.oneSidedRead().encode()))
                .putInt(8, 1).put((byte) 0).flip();
        e = assertThrows(SessionException.class,
                () -> SessionRequest.read(new ScriptedPeer(bytes(readWithParams), 100).communicator()));
        assertTrue(e.getMessage().contains("READ takes 0 bytes of parameters, got 1"), e.getMessage());
    }

    @Test
    void exchangeResultIsVersionedWithExplicitLengthsAndRoundTrips() throws IOException {
        ExchangeResult ok = ExchangeResult.ok(ByteBuffer.wrap(new byte[] {7, 8}));
        assertArrayEquals(new byte[] {'R', 'C', 'S', 'X', 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 7, 8}, bytes(ok.encode()));
        assertEquals(ok, ExchangeResult.read(new ScriptedPeer(bytes(ok.encode()), 3).communicator()));
        ExchangeResult error = ExchangeResult.error(SessionStatus.GROUP_TIMEOUT, "too slow");
        assertEquals(error, ExchangeResult.read(new ScriptedPeer(bytes(error.encode()), 1).communicator()));

        SessionException refused = assertThrows(SessionException.class,
                () -> ExchangeResult.expectOk(new ScriptedPeer(bytes(error.encode()), 100).communicator(), "alltoall"));
        assertEquals("alltoall: GROUP_TIMEOUT: too slow", refused.getMessage());

        ByteBuffer oversized = ok.encode();
        oversized.putInt(10, SessionProtocol.MAX_RESULT_BODY + 1);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> ExchangeResult.read(new ScriptedPeer(bytes(oversized), 100).communicator()));
        assertTrue(e.getMessage().contains("body of 8193 bytes"), e.getMessage());
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
