package io.rdmacomm.collectives;

import static io.rdmacomm.collectives.ScriptedPeer.concat;
import static io.rdmacomm.collectives.ScriptedPeer.frame;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.verify;

import io.rdmacomm.api.CommunicatorException;
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
        ScriptedPeer root = new ScriptedPeer("root", concat(frame(5), "START".getBytes(US_ASCII)));
        assertArrayEquals("START".getBytes(US_ASCII), bytes(Collectives.receiveBroadcast(root.mock, 64)));
    }

    @Test
    void rejectsAnOversizedBroadcastAnnouncement() throws Exception {
        ScriptedPeer root = new ScriptedPeer("root", frame(1 << 30));
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> Collectives.receiveBroadcast(root.mock, 1024));
        assertTrue(e.getMessage().contains("announces 1073741824 bytes; at most 1024"), e.getMessage());
    }

    @Test
    void allToAllSendsTheContributionAndReadsEveryRank() throws Exception {
        ScriptedPeer root = new ScriptedPeer("root", concat(frame(3, 2), "aabbcc".getBytes(US_ASCII)));
        Collectives.AllToAllResult r = Collectives.allToAll(root.mock, ByteBuffer.wrap("bb".getBytes(US_ASCII)),
                64);
        assertArrayEquals(concat(frame(2), "bb".getBytes(US_ASCII)), root.written.toByteArray());
        verify(root.mock).sync();
        assertEquals(3, r.participants());
        assertArrayEquals("cc".getBytes(US_ASCII), bytes(r.contribution(2)));
        assertThrows(IndexOutOfBoundsException.class, () -> r.contribution(3));
    }

    @Test
    void allToAllRejectsAMalformedAnswer() throws Exception {
        ScriptedPeer wrongSize = new ScriptedPeer("root", concat(frame(2, 9), new byte[18]));
        assertThrows(CommunicatorException.class,
                () -> Collectives.allToAll(wrongSize.mock, ByteBuffer.wrap(new byte[2]), 64));
        ScriptedPeer tooMany = new ScriptedPeer("root", frame(1000, 2));
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> Collectives.allToAll(tooMany.mock, ByteBuffer.wrap(new byte[2]), 65));
        assertTrue(e.getMessage().contains("1000 participants"), e.getMessage());
    }
}
