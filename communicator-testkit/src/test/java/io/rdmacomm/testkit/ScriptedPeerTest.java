package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.Mockito.verify;

import io.rdmacomm.api.Communicator;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ScriptedPeerTest {

    @Test
    void readsComeInChunksOfAtMostMaxChunkThenEndOfStream() throws Exception {
        ScriptedPeer peer = new ScriptedPeer("p", ScriptedPeer.ints(0x01020304, 0x05060708), 3);
        Communicator c = peer.communicator();
        ByteBuffer dst = ByteBuffer.allocate(16);
        assertEquals(3, c.read(dst));
        assertEquals(3, c.read(dst));
        assertEquals(2, c.read(dst));
        assertEquals(-1, c.read(dst));
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, Arrays.copyOf(dst.array(), 8));
        assertEquals(8, peer.consumed());
        assertEquals("p", c.peerName());
    }

    @Test
    void readFullyLoopsOverShortReadsAndFailsAtTheEndOfTheScript() throws Exception {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(new byte[] {1, 2}, new byte[] {3}), 1);
        ByteBuffer two = ByteBuffer.allocate(2);
        peer.communicator().readFully(two);
        assertArrayEquals(new byte[] {1, 2}, two.array());
        assertThrows(EOFException.class, () -> peer.communicator().readFully(ByteBuffer.allocate(2)));
    }

    @Test
    void writesAreRecordedInOrderAndOtherCallsAreTheMocks() throws Exception {
        ScriptedPeer peer = new ScriptedPeer(new byte[0], 8);
        peer.communicator().write(ByteBuffer.wrap(new byte[] {9, 8}));
        peer.communicator().write(ByteBuffer.wrap(new byte[] {7}));
        peer.communicator().sync();
        assertEquals(ByteBuffer.wrap(new byte[] {9, 8, 7}), peer.written());
        assertArrayEquals(new byte[] {9, 8, 7},
                ScriptedPeer.concat(ByteBuffer.wrap(new byte[] {9}), ByteBuffer.wrap(new byte[] {8, 7})));
        verify(peer.communicator()).sync();
    }
}
