package io.rdmacomm.collectives;

import static io.rdmacomm.testkit.ScriptedPeer.concat;
import static io.rdmacomm.testkit.ScriptedPeer.ints;
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
import io.rdmacomm.testkit.ScriptedPeer;
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
        ScriptedPeer p1 = new ScriptedPeer("p1", new byte[0], 3);
        ScriptedPeer p2 = new ScriptedPeer("p2", new byte[0], 3);
        PeerGroup group = new PeerGroup();
        group.add(p1.communicator());
        group.add(p2.communicator());
        ByteBuffer data = ByteBuffer.wrap("START".getBytes(US_ASCII));
        group.broadcast(data);
        byte[] expected = concat(ints(5), "START".getBytes(US_ASCII));
        assertArrayEquals(expected, p1.written().array());
        assertArrayEquals(expected, p2.written().array());
        verify(p1.communicator()).sync();
        verify(p2.communicator()).sync();
        InOrder order = inOrder(p1.communicator(), p2.communicator());
        order.verify(p1.communicator()).sync();
        order.verify(p2.communicator(), org.mockito.Mockito.atLeastOnce()).write(any());
        assertEquals(0, data.remaining());
    }

    @Test
    void broadcastNamesTheRankThatFailed() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", new byte[0], 3);
        Communicator broken = mock(Communicator.class);
        org.mockito.Mockito.when(broken.peerName()).thenReturn("10.9.9.9:1");
        doThrow(new IOException("connection reset")).when(broken).sync();
        PeerGroup group = new PeerGroup();
        group.add(p1.communicator());
        group.add(broken);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> group.broadcast(ByteBuffer.wrap(new byte[] {1})));
        assertTrue(e.getMessage().contains("rank 2 (10.9.9.9:1)"), e.getMessage());
        assertTrue(e.getMessage().contains("connection reset"), e.getMessage());
    }

    @Test
    void allToAllGathersInRankOrderAndReturnsTheCombinationToEveryone() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", concat(ints(4), "bbbb".getBytes(US_ASCII)), 3);
        ScriptedPeer p2 = new ScriptedPeer("p2", concat(ints(4), "cccc".getBytes(US_ASCII)), 3);
        PeerGroup group = new PeerGroup();
        group.add(p1.communicator());
        group.add(p2.communicator());
        ByteBuffer result = group.allToAll(ByteBuffer.wrap("aaaa".getBytes(US_ASCII)));
        byte[] combined = "aaaabbbbcccc".getBytes(US_ASCII);
        byte[] got = new byte[result.remaining()];
        result.get(got);
        assertArrayEquals(combined, got);
        byte[] expectedToPeers = concat(ints(3, 4), combined);
        assertArrayEquals(expectedToPeers, p1.written().array());
        assertArrayEquals(expectedToPeers, p2.written().array());
    }

    @Test
    void allToAllRejectsAContributionOfAnotherSizeAndNamesIt() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", concat(ints(4), "bbbb".getBytes(US_ASCII)), 3);
        ScriptedPeer p2 = new ScriptedPeer("p2", concat(ints(7), "ccccccc".getBytes(US_ASCII)), 3);
        PeerGroup group = new PeerGroup();
        group.add(p1.communicator());
        group.add(p2.communicator());
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> group.allToAll(ByteBuffer.wrap("aaaa".getBytes(US_ASCII))));
        assertTrue(e.getMessage().contains("rank 2 (p2) contributed 7 bytes, expected 4"), e.getMessage());
        verify(p1.communicator(), never()).write(any());
    }

    @Test
    void allToAllReportsAPeerThatClosedMidContribution() throws Exception {
        ScriptedPeer p1 = new ScriptedPeer("p1", concat(ints(4), "bb".getBytes(US_ASCII)), 3);
        PeerGroup group = new PeerGroup();
        group.add(p1.communicator());
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
