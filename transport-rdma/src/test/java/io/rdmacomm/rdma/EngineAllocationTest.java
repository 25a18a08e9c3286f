package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine's small-message path (write, sync, DATA_INLINE, read, CREDIT) allocates nothing once warm: a
 * connection whose channel loops every message back to itself, on the calling thread.
 */
@Timeout(60)
class EngineAllocationTest {

    private record Local(RegionDescriptor descriptor) implements LocalRegion {
        @Override
        public long address() {
            return descriptor.address();
        }

        @Override
        public long length() {
            return descriptor.length();
        }

        @Override
        public void close() {
        }
    }

    private record Remote(RegionDescriptor descriptor) implements RemoteRegion {
        @Override
        public void close() {
        }
    }

    /** A channel to itself: sends are handed to its own handler at once; no progress thread, no copies. */
    /** Channel and node at once: every message comes back to the same connection. */
    private static final class Loopback implements RdmaChannel, RdmaNode {
        ChannelHandler handler;
        int sends;

        @Override
        public String peerName() {
            return "itself";
        }

        @Override
        public LocalRegion register(ByteBuffer buffer, Set<Access> access) {
            return new Local(new RegionDescriptor(0x1000, buffer.capacity(), access, new byte[] {1}));
        }

        @Override
        public RemoteRegion unpack(RegionDescriptor descriptor) {
            return new Remote(descriptor);
        }

        @Override
        public int maxMessageSize() {
            return 4096;
        }

        @Override
        public void send(ByteBuffer message, Completion done) {
            sends++;
            handler.onMessage(message);
            done.completed();
        }

        @Override
        public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
                ByteBuffer notification, Completion done) {
            throw new AssertionError("small writes travel inline, not as writes");
        }

        @Override
        public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
                Completion done) {
            throw new AssertionError("no one-sided reads here");
        }

        @Override
        public boolean poll() {
            return false;
        }

        @Override
        public int localId() {
            return 1;
        }

        @Override
        public void connect(byte[] peerAddress, int peerChannelId, Role role, long deadline) {
        }

        @Override
        public boolean boundsEnforcedByTransport() {
            return true;
        }

        @Override
        public byte[] address() {
            return new byte[] {1};
        }

        @Override
        public RdmaChannel newChannel(String peerName, ChannelHandler handler) {
            return this;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void smallWritesSyncsAndReadsAllocateNothingOnceWarm() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Connection c = new Connection(Endpoint.parse("rdma://127.0.0.1:1?ringSize=64k&readTimeout=10s"));
        Loopback ch = new Loopback();
        ch.handler = c;
        c.attach(ch, ch);
        c.clientHandshake(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        ByteBuffer src = ByteBuffer.allocate(64);
        ByteBuffer dst = ByteBuffer.allocate(64);
        long checksum = 0;
        // the least of three measured rounds: the JVM allocates now and then on its own (a few hundred bytes)
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 4; round++) {
            int sendsBefore = ch.sends;
            long before = mx.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 50_000; i++) {
                src.clear().putLong(0, i).position(8 + (i & 31));
                src.flip();
                int n = src.remaining();
                c.write(src);
                c.sync();
                dst.clear().limit(n);
                while (dst.hasRemaining()) {
                    assertTrue(c.read(dst) > 0); // short where the ring wraps
                }
                checksum += dst.getLong(0);
            }
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            if (round > 0) {
                assertTrue(ch.sends - sendsBefore > 50_000, "DATA_INLINE and CREDIT messages: "
                        + (ch.sends - sendsBefore));
                least = Math.min(least, allocated);
            }
        }
        assertTrue(least < 1024, least + " bytes allocated by 50 000 write+sync+read rounds");
        assertEquals(4L * (49_999L * 50_000 / 2), checksum);
        c.close();
    }
}
