package io.rdmacomm.servercomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.inOrder;

import io.rdmacomm.api.CommunicatorException;
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
        SessionRequest r = SessionRequest.read(peer.mock);
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
        SessionReply read = SessionReply.read(new ScriptedPeer(bytes(longReply.encode()), 100).mock);
        assertEquals(SessionStatus.BAD_PARAMETERS, read.status());
        assertEquals(SessionProtocol.MAX_MESSAGE_LENGTH, read.message().length());
    }

    @Test
    void clientSendsTheRequestSyncsAndAcceptsOk() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(bytes(SessionReply.ok().encode()), Integer.MAX_VALUE);

        SessionClient.open(peer.mock, SessionRequest.sink(42));

        assertArrayEquals(bytes(SessionRequest.sink(42).encode()), bytes(peer.written()));
        InOrder order = inOrder(peer.mock);
        order.verify(peer.mock).write(any());
        order.verify(peer.mock).sync();
        order.verify(peer.mock).read(any());
    }

    @Test
    void clientReportsARefusalWithTheServersReason() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(bytes(new SessionReply(SessionStatus.BUSY,
                "server is at its limit of 1 sessions").encode()), Integer.MAX_VALUE);

        SessionException e = assertThrows(SessionException.class,
                () -> SessionClient.open(peer.mock, SessionRequest.echo()));

        assertEquals(SessionStatus.BUSY, e.status());
        assertTrue(e.getMessage().contains("refused the ECHO session: BUSY: server is at its limit of 1 sessions"),
                e.getMessage());
    }

    @Test
    void clientStillReadsTheRefusalWhenTheServerClosedBeforeTakingTheRequest() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(bytes(new SessionReply(SessionStatus.BUSY, "full").encode()),
                Integer.MAX_VALUE);
        doThrow(new IOException("connection closed by the peer")).when(peer.mock).sync();

        SessionException e = assertThrows(SessionException.class,
                () -> SessionClient.open(peer.mock, SessionRequest.echo()));

        assertEquals(SessionStatus.BUSY, e.status());
    }

    @Test
    void clientReportsTheSendFailureWhenNoReplyCameEither() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(new byte[0], 1);
        doThrow(new IOException("broken pipe")).when(peer.mock).sync();

        IOException e = assertThrows(IOException.class, () -> SessionClient.open(peer.mock, SessionRequest.echo()));

        assertEquals("broken pipe", e.getMessage());
        assertEquals(1, e.getSuppressed().length);
    }

    @Test
    void clientRejectsAPeerThatIsNotAServercomm() throws IOException {
        ScriptedPeer peer = new ScriptedPeer("HTTP/1.1 400 Bad Request\r\n".getBytes(StandardCharsets.US_ASCII),
                Integer.MAX_VALUE);

        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> SessionClient.open(peer.mock, SessionRequest.echo()));

        assertTrue(e.getMessage().contains("got 0x48545450") && e.getMessage().contains("servercomm"),
                e.getMessage());
    }

    @Test
    void sinkAckRoundTripsAndAnythingElseIsNamed() throws IOException {
        ScriptedPeer writer = new ScriptedPeer(new byte[0], 1);
        SessionProtocol.writeSinkAck(writer.mock, 987_654_321L);
        assertEquals(987_654_321L, SessionProtocol.readSinkAck(new ScriptedPeer(bytes(writer.written()), 5).mock));

        ScriptedPeer wrong = new ScriptedPeer(bytes(SessionReply.ok().encode()), Integer.MAX_VALUE);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> SessionProtocol.readSinkAck(wrong.mock));
        assertTrue(e.getMessage().contains("0x52435352"), e.getMessage());
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
