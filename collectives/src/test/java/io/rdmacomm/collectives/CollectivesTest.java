package io.rdmacomm.collectives;

import static io.rdmacomm.testkit.ScriptedPeer.concat;
import static io.rdmacomm.testkit.ScriptedPeer.ints;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.verify;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.testkit.ScriptedPeer;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class CollectivesTest {

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    @Test
    void receivesABroadcast() throws Exception {
        ScriptedPeer root = new ScriptedPeer("root", concat(ints(5), "START".getBytes(US_ASCII)), 3);
        assertArrayEquals("START".getBytes(US_ASCII), bytes(Collectives.receiveBroadcast(root.communicator(), 64)));
    }

    @Test
    void rejectsAnOversizedBroadcastAnnouncement() throws Exception {
        ScriptedPeer root = new ScriptedPeer("root", ints(1 << 30), 3);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> Collectives.receiveBroadcast(root.communicator(), 1024));
        assertTrue(e.getMessage().contains("announces 1073741824 bytes; at most 1024"), e.getMessage());
    }

    @Test
    void allToAllSendsTheContributionAndReadsEveryRank() throws Exception {
        ScriptedPeer root = new ScriptedPeer("root", concat(ints(3, 2), "aabbcc".getBytes(US_ASCII)), 3);
        Collectives.AllToAllResult r = Collectives.allToAll(root.communicator(),
                ByteBuffer.wrap("bb".getBytes(US_ASCII)), 64);
        assertArrayEquals(concat(ints(2), "bb".getBytes(US_ASCII)), root.written().array());
        verify(root.communicator()).sync();
        assertEquals(3, r.participants());
        assertArrayEquals("cc".getBytes(US_ASCII), bytes(r.contribution(2)));
        assertThrows(IndexOutOfBoundsException.class, () -> r.contribution(3));
    }

    @Test
    void allToAllRejectsAMalformedAnswer() throws Exception {
        ScriptedPeer wrongSize = new ScriptedPeer("root", concat(ints(2, 9), new byte[18]), 3);
        assertThrows(CommunicatorException.class,
                () -> Collectives.allToAll(wrongSize.communicator(), ByteBuffer.wrap(new byte[2]), 64));
        ScriptedPeer tooMany = new ScriptedPeer("root", ints(1000, 2), 3);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> Collectives.allToAll(tooMany.communicator(), ByteBuffer.wrap(new byte[2]), 65));
        assertTrue(e.getMessage().contains("1000 participants"), e.getMessage());
    }
}
