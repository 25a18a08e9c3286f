package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.MappedRing;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.rdma.ucx.ffm.FfmProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real rdma:// connections on ucx-ffm over UCX shared memory, in one process: a client whose HELLO carries, as its
 * receive ring's advert, the advert of another connection's ring (a peer replaying what it was given elsewhere).
 * The server refuses to map it and writes to that client as active messages; both connections carry their
 * streams both ways, and the legitimate one keeps its mapped rings.
 */
@Timeout(60)
class FfmSharedRingReplayTest {
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();

    @AfterEach
    void closeAll() throws Exception {
        while (!resources.isEmpty()) {
            resources.pop().close();
        }
    }

    @Test
    void aClientReplayingAnotherConnectionsRingAdvertIsWrittenToAsActiveMessages() throws Exception {
        assumeTrue(UcxTransports.sharedMemoryAllowed() && new FfmProvider().unavailabilityCause().isEmpty(),
                "needs UCX with shared memory");
        RdmaCommunicator server = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:0?provider=ucx-ffm"),
                new FfmProvider());
        resources.push(server);
        server.serve();

        AtomicReference<byte[]> recorded = new AtomicReference<>();
        RdmaCommunicator legit = new RdmaCommunicator(server.endpoint(), new Adverts(recorded, null));
        resources.push(legit);
        legit.connect();
        RdmaCommunicator legitAccepted = (RdmaCommunicator) server.accept();
        resources.push(legitAccepted);
        assertNotNull(recorded.get(), "the legitimate client's ring advert");
        echo(legit, legitAccepted, 100_000);
        assertTrue(legitAccepted.statistics().peerRingMapped(), "the server maps the legitimate client's ring");
        assertTrue(legit.statistics().peerRingMapped(), "the legitimate client maps the server's ring");

        RdmaCommunicator replaying = new RdmaCommunicator(server.endpoint(), new Adverts(null, recorded.get()));
        resources.push(replaying);
        replaying.connect();
        RdmaCommunicator replayAccepted = (RdmaCommunicator) server.accept();
        resources.push(replayAccepted);
        echo(replaying, replayAccepted, 100_000);
        assertFalse(replayAccepted.statistics().peerRingMapped(),
                "the server refuses the replayed ring: its writes to that client are active messages");

        echo(legit, legitAccepted, 100_000);
        assertTrue(legitAccepted.statistics().peerRingMapped(), "the legitimate connection keeps its ring");
    }

    /** {@code n} bytes each way, whole. */
    private static void echo(Communicator a, Communicator b, int n) throws IOException {
        for (Communicator[] pair : new Communicator[][] {{a, b}, {b, a}}) {
            byte[] sent = new byte[n];
            for (int i = 0; i < n; i++) {
                sent[i] = (byte) (i * 7 + 3);
            }
            pair[0].write(ByteBuffer.wrap(sent));
            pair[0].sync();
            ByteBuffer got = ByteBuffer.allocate(n);
            while (got.hasRemaining()) {
                if (pair[1].read(got) < 0) {
                    throw new IOException("closed after " + got.position() + " of " + n + " bytes");
                }
            }
            assertArrayEquals(sent, got.array());
        }
    }

    /**
     * ucx-ffm whose channels record the advert of the first receive ring they allocate ({@code record}), or replace
     * their own advert by {@code replay} in the ring's descriptor, as a hostile client would.
     */
    private static final class Adverts implements RdmaProvider {
        private final RdmaProvider ffm = new FfmProvider();
        private final AtomicReference<byte[]> record;
        private final byte[] replay;

        Adverts(AtomicReference<byte[]> record, byte[] replay) {
            this.record = record;
            this.replay = replay;
        }

        @Override
        public String name() {
            return ffm.name();
        }

        @Override
        public String wireFamily() {
            return ffm.wireFamily();
        }

        @Override
        public Optional<String> unavailabilityCause() {
            return ffm.unavailabilityCause();
        }

        @Override
        public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) throws IOException {
            RdmaNode node = ffm.node(localInterface, side);
            return new RdmaNode() {
                @Override
                public byte[] address() {
                    return node.address();
                }

                @Override
                public RdmaChannel newChannel(String peerName, ChannelHandler handler) throws IOException {
                    return new Channel(node.newChannel(peerName, handler));
                }

                @Override
                public boolean poll() {
                    return node.poll();
                }

                @Override
                public void pollingEnded() {
                    node.pollingEnded();
                }

                @Override
                public void close() {
                    node.close();
                }
            };
        }

        private final class Channel implements RdmaChannel {
            private final RdmaChannel ch;

            Channel(RdmaChannel ch) {
                this.ch = ch;
            }

            @Override
            public RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
                RegisteredBuffer rb = ch.allocate(length, access);
                RegionDescriptor d = rb.region().descriptor();
                if (record != null) {
                    record.compareAndSet(null, d.key());
                }
                if (replay == null) {
                    return rb;
                }
                RegionDescriptor forged = new RegionDescriptor(d.address(), d.length(), d.access(), replay);
                return new RegisteredBuffer(rb.buffer(), new Forged(rb.region(), forged), rb.control());
            }

            @Override
            public int localId() {
                return ch.localId();
            }

            @Override
            public void connect(byte[] peerAddress, int peerChannelId, Role role, long deadline) throws IOException {
                ch.connect(peerAddress, peerChannelId, role, deadline);
            }

            @Override
            public boolean boundsEnforcedByTransport() {
                return ch.boundsEnforcedByTransport();
            }

            @Override
            public String peerName() {
                return ch.peerName();
            }

            @Override
            public LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
                return ch.register(buffer, access);
            }

            @Override
            public boolean placesWritesDirectly() {
                return ch.placesWritesDirectly();
            }

            @Override
            public boolean writesAreOneSided() {
                return ch.writesAreOneSided();
            }

            @Override
            public MappedRing mapRemote(RemoteRegion region) {
                return ch.mapRemote(region);
            }

            @Override
            public RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
                return ch.unpack(descriptor);
            }

            @Override
            public int maxMessageSize() {
                return ch.maxMessageSize();
            }

            @Override
            public void send(ByteBuffer message, Completion done) {
                ch.send(message, done);
            }

            @Override
            public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
                    ByteBuffer notification, Completion done) {
                ch.write(Forged.unwrap(src), srcAddress, dst, dstAddress, length, notification, done);
            }

            @Override
            public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
                    Completion done) {
                ch.read(src, srcAddress, Forged.unwrap(dst), dstAddress, length, done);
            }

            @Override
            public void close() {
                ch.close();
            }
        }
    }

    /** The channel's own region under a descriptor that names another ring. */
    private record Forged(LocalRegion region, RegionDescriptor descriptor) implements LocalRegion {
        static LocalRegion unwrap(LocalRegion r) {
            return r instanceof Forged f ? f.region : r;
        }

        @Override
        public long address() {
            return region.address();
        }

        @Override
        public long length() {
            return region.length();
        }

        @Override
        public void close() {
            region.close();
        }
    }
}
