package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.testkit.Harness.Pair;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class FaultsTest {
    private final Harness h = new Harness(TransportUnderTest.local());

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    @Test
    void oneByteReadsReturnOneByteAtATimeAndKeepOrder() throws Exception {
        Pair p = h.pair();
        byte[] msg = Harness.random(1, 100);
        Harness.writeAll(p.client(), msg, msg.length);
        Communicator slow = Faults.oneByteReads(p.accepted());
        ByteBuffer dst = ByteBuffer.allocate(msg.length);
        int reads = 0;
        while (dst.hasRemaining()) {
            int limit = dst.limit();
            assertEquals(1, slow.read(dst));
            assertEquals(limit, dst.limit(), "the wrapper restores the caller's limit");
            reads++;
        }
        assertEquals(msg.length, reads);
        assertArrayEquals(msg, dst.array());
    }

    @Test
    void shortReadsCapEachReadAndPassEndOfStreamThrough() throws Exception {
        Pair p = h.pair();
        byte[] msg = Harness.random(2, 1000);
        Harness.writeAll(p.client(), msg, msg.length);
        p.client().close();
        Communicator capped = Faults.shortReads(p.accepted(), 7);
        ByteBuffer dst = ByteBuffer.allocate(2000);
        int n;
        int total = 0;
        while ((n = capped.read(dst)) > 0) {
            assertTrue(n <= 7, "read returned " + n + " bytes, cap 7");
            total += n;
        }
        assertEquals(-1, n);
        assertEquals(msg.length, total);
        assertArrayEquals(msg, Arrays.copyOf(dst.array(), total));
        assertThrows(IllegalArgumentException.class, () -> Faults.shortReads(p.accepted(), 0));
    }

    @Test
    void readFullyOverOneByteReadsThrowsEofWithCounts() throws Exception {
        Pair p = h.pair();
        Harness.writeAll(p.client(), new byte[3], 3);
        p.client().close();
        EOFException e = assertThrows(EOFException.class,
                () -> Faults.oneByteReads(p.accepted()).readFully(ByteBuffer.allocate(8)));
        assertTrue(e.getMessage().contains("3 of 8"), e.getMessage());
    }

    @Test
    void closeAfterBytesDeliversExactlyTheLimitThenEndOfStream() throws Exception {
        Pair p = h.pair();
        Communicator dying = Faults.closeAfterBytes(p.client(), 250);
        byte[] msg = Harness.random(3, 400);
        dying.write(ByteBuffer.wrap(msg, 0, 100));
        assertTrue(dying.isOpen());
        ByteBuffer rest = ByteBuffer.wrap(msg, 100, 300);
        IOException e = assertThrows(IOException.class, () -> dying.write(rest));
        assertTrue(e.getMessage().contains("250") && e.getMessage().contains("150"), e.getMessage());
        assertFalse(dying.isOpen());
        assertFalse(p.client().isOpen(), "the wrapped communicator is closed");
        assertThrows(ClosedChannelException.class, () -> dying.write(ByteBuffer.allocate(1)));
        assertArrayEquals(Arrays.copyOf(msg, 250), Harness.readN(p.accepted(), 250));
        assertEquals(-1, p.accepted().read(ByteBuffer.allocate(1)));
    }

    @Test
    void closeAfterBytesClosesWhenAWriteReachesTheLimitExactly() throws Exception {
        Pair p = h.pair();
        Communicator dying = Faults.closeAfterBytes(p.client(), 10);
        dying.write(ByteBuffer.allocate(10));
        assertFalse(dying.isOpen());
        assertEquals(10, Harness.readN(p.accepted(), 10).length);
        assertEquals(-1, p.accepted().read(ByteBuffer.allocate(1)));
        assertThrows(IllegalArgumentException.class, () -> Faults.closeAfterBytes(p.client(), -1));
    }
}
