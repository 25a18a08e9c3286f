package io.rdmacomm.collectives;

import static io.rdmacomm.collectives.ScriptedPeer.concat;
import static io.rdmacomm.collectives.ScriptedPeer.frame;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mockito.InOrder;

@Timeout(10)
class PeerGroupTest {

    @Test
    void ranksFollowTheOrderPeersWereAddedAndTheMaximumIsEnforced() {
        PeerGroup group = new PeerGroup(2);
        Communicator a = mock(Communicator.class);
        Communicator b = mock(Communicator.class);
        assertEquals(1, group.add(a));
        assertEquals(2, group.add(b));
        assertEquals(b, group.peer(2));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> group.add(mock(Communicator.class)));
        assertTrue(e.getMessage().contains("at most 2 peers"), e.getMessage());
        assertEquals(64, new PeerGroup().maxPeers());
        assertThrows(IllegalArgumentException.class, () -> new PeerGroup(0));
    }

    @Test
    void broadcastSendsLengthAndBytesToEveryPeerAndSyncsEach() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", new byte[0]);
        ScriptedPeer p2 = new ScriptedPeer("p2", new byte[0]);
        PeerGroup group = new PeerGroup();
        group.add(p1.mock);
        group.add(p2.mock);
        ByteBuffer data = ByteBuffer.wrap("START".getBytes(US_ASCII));
        group.broadcast(data);
        byte[] expected = concat(frame(5), "START".getBytes(US_ASCII));
        assertArrayEquals(expected, p1.written.toByteArray());
        assertArrayEquals(expected, p2.written.toByteArray());
        verify(p1.mock).sync();
        verify(p2.mock).sync();
        InOrder order = inOrder(p1.mock, p2.mock);
        order.verify(p1.mock).sync();
        order.verify(p2.mock, org.mockito.Mockito.atLeastOnce()).write(any());
        assertEquals(0, data.remaining());
    }

    @Test
    void broadcastNamesTheRankThatFailed() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", new byte[0]);
        Communicator broken = mock(Communicator.class);
        org.mockito.Mockito.when(broken.peerName()).thenReturn("10.9.9.9:1");
        doThrow(new IOException("connection reset")).when(broken).sync();
        PeerGroup group = new PeerGroup();
        group.add(p1.mock);
        group.add(broken);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> group.broadcast(ByteBuffer.wrap(new byte[] {1})));
        assertTrue(e.getMessage().contains("rank 2 (10.9.9.9:1)"), e.getMessage());
        assertTrue(e.getMessage().contains("connection reset"), e.getMessage());
    }

    @Test
    void allToAllGathersInRankOrderAndReturnsTheCombinationToEveryone() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", concat(frame(4), "bbbb".getBytes(US_ASCII)));
        ScriptedPeer p2 = new ScriptedPeer("p2", concat(frame(4), "cccc".getBytes(US_ASCII)));
        PeerGroup group = new PeerGroup();
        group.add(p1.mock);
        group.add(p2.mock);
        ByteBuffer result = group.allToAll(ByteBuffer.wrap("aaaa".getBytes(US_ASCII)));
        byte[] combined = "aaaabbbbcccc".getBytes(US_ASCII);
        byte[] got = new byte[result.remaining()];
        result.get(got);
        assertArrayEquals(combined, got);
        byte[] expectedToPeers = concat(frame(3, 4), combined);
        assertArrayEquals(expectedToPeers, p1.written.toByteArray());
        assertArrayEquals(expectedToPeers, p2.written.toByteArray());
    }

    @Test
    void allToAllRejectsAContributionOfAnotherSizeAndNamesIt() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", concat(frame(4), "bbbb".getBytes(US_ASCII)));
        ScriptedPeer p2 = new ScriptedPeer("p2", concat(frame(7), "ccccccc".getBytes(US_ASCII)));
        PeerGroup group = new PeerGroup();
        group.add(p1.mock);
        group.add(p2.mock);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> group.allToAll(ByteBuffer.wrap("aaaa".getBytes(US_ASCII))));
        assertTrue(e.getMessage().contains("rank 2 (p2) contributed 7 bytes, expected 4"), e.getMessage());
        verify(p1.mock, never()).write(any());
    }

    @Test
    void allToAllReportsAPeerThatClosedMidContribution() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", concat(frame(4), "bb".getBytes(US_ASCII)));
        PeerGroup group = new PeerGroup();
        group.add(p1.mock);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> group.allToAll(ByteBuffer.wrap("aaaa".getBytes(US_ASCII))));
        assertTrue(e.getMessage().contains("rank 1 (p1)"), e.getMessage());
        assertTrue(e.getCause() instanceof java.io.EOFException, String.valueOf(e.getCause()));
    }

    @Test
    void closeClosesEveryPeerEvenIfOneFails() throws Exception {
        Communicator a = mock(Communicator.class);
        Communicator b = mock(Communicator.class);
        doThrow(new IOException("boom")).when(a).close();
        PeerGroup group = new PeerGroup();
        group.add(a);
        group.add(b);
        assertThrows(IOException.class, group::close);
        verify(b).close();
        assertEquals(0, group.size());
    }
}
