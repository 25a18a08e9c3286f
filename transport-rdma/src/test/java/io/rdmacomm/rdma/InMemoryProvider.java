package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.MappedRing;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A provider whose "remote memory" is the other channel's registered buffers in this JVM. Each channel delivers
 * to its peer on its own thread, in order, so completions and notifications are asynchronous as on a fabric; hooks
 * inject faults: failed completions, a peer that vanishes or hangs, swapped notifications.
 */
class InMemoryProvider implements RdmaProvider {
    private static final byte[] NODE_ADDRESS = {'i', 'n', 'm', 'e', 'm'};
    private final Map<Long, Mem> memory = new ConcurrentHashMap<>();
    private final AtomicLong nextAddress = new AtomicLong(0x1000_0000L);
    private final AtomicInteger nextId = new AtomicInteger(1);
    private final Map<Integer, Chan> byId = new ConcurrentHashMap<>();
    /** Connected channels by name: "client#id" or "server#id". */
    final Map<String, Chan> channels = new ConcurrentHashMap<>();
    /** Node references not closed yet. */
    final AtomicInteger nodeUsers = new AtomicInteger();
    /** Every peer node address handed to a channel's {@code connect}, with the role, in order: "PASSIVE [..]". */
    final List<String> connectCalls = new CopyOnWriteArrayList<>();

    /**
     * Whether channels allocate rings with control words and map the peer's ring ({@link RdmaChannel#mapRemote}),
     * as ucx-ffm does on shared memory; set before connecting.
     */
    volatile boolean mapRings;
    /**
     * Non-null: clients' channels fail every {@code unpack} with this message, as UCX does for a peer's ring whose
     * shared memory segment is gone.
     */
    volatile String refuseClientUnpacks;
    /** Control words of the rings allocated with {@link #mapRings}, by the ring's base address. */
    final Map<Long, ByteBuffer> controls = new ConcurrentHashMap<>();

    /** Registered memory: base address to buffer. */
    private record Mem(long address, ByteBuffer buffer, Set<Access> access) {
    }

    /** A server on this provider, a client connected to it and the server's side of that connection. */
    record Connected(RdmaCommunicator server, RdmaCommunicator client, RdmaCommunicator accepted)
            implements AutoCloseable {
        @Override
        public void close() {
            client.close();
            accepted.close();
            server.close();
        }
    }

    /** Serves {@code rdma://127.0.0.1:0<options>} on this provider and connects a client. */
    Connected connect(String options) throws IOException {
        RdmaCommunicator server = new RdmaCommunicator(io.rdmacomm.api.Endpoint.parse("rdma://127.0.0.1:0" + options),
                this);
        server.serve();
        RdmaCommunicator client = new RdmaCommunicator(server.endpoint(), this);
        client.connect();
        return new Connected(server, client, (RdmaCommunicator) server.accept());
    }

    @Override
    public String name() {
        return "inmem";
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return Optional.empty();
    }

    @Override
    public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) {
        nodeUsers.incrementAndGet();
        return new RdmaNode() {
            private final AtomicBoolean closed = new AtomicBoolean();

            @Override
            public byte[] address() {
                return NODE_ADDRESS.clone();
            }

            @Override
            public RdmaChannel newChannel(String peerName, ChannelHandler handler) {
                Chan c = new Chan(nextId.getAndIncrement());
                c.handler = handler;
                byId.put(c.id, c);
                return c;
            }

            @Override
            public boolean poll() {
                return false;
            }

            @Override
            public void close() {
                if (closed.compareAndSet(false, true)) {
                    nodeUsers.decrementAndGet();
                }
            }
        };
    }

    private Mem find(RegionDescriptor d, long address, long length, Access needed) throws RemoteAccessException {
        Mem m = memory.get(ByteBuffer.wrap(d.key()).getLong());
        if (m == null) {
            throw new RemoteAccessException("remote key not registered");
        }
        if (!m.access().contains(needed)) {
            throw new RemoteAccessException("no " + needed);
        }
        if (address < m.address() || address + length > m.address() + m.buffer().capacity()) {
            throw new RemoteAccessException("out of bounds");
        }
        return m;
    }

    private static ByteBuffer view(Mem m, long address, int length) {
        int off = (int) (address - m.address());
        return m.buffer().duplicate().limit(off + length).position(off);
    }

    /** One side of a connection. */
    final class Chan implements RdmaChannel {
        final int id;
        volatile String name;
        volatile Chan peer;
        volatile ChannelHandler handler;
        private final ExecutorService deliver;
        private volatile boolean closed;
        private volatile boolean vanished;
        private final CountDownLatch resumed = new CountDownLatch(1);
        /** Fails the next write completions with this error, without placing data. */
        final AtomicReference<IOException> failWrites = new AtomicReference<>();
        /** Holds back the next DATA or DATA_INLINE notification until after the following message. */
        volatile boolean swapNextNotification;
        private ByteBuffer held;
        final AtomicInteger writes = new AtomicInteger();
        /**
         * close() tells the peer of the end at once and drops what is still queued for it, as UCX may (its
         * connection manager reports a closed endpoint on another path than the messages).
         */
        volatile boolean closeOvertakesMessages;
        /** Messages sent with {@link #send} (control messages and DATA_INLINE). */
        final AtomicInteger sends = new AtomicInteger();

        Chan(int id) {
            this.id = id;
            this.name = "chan#" + id;
            this.deliver = Executors.newSingleThreadExecutor(r -> new Thread(r, "rdmacomm-rdma-test-" + id));
        }

        @Override
        public int localId() {
            return id;
        }

        @Override
        public void connect(byte[] peerAddress, int peerChannelId, Role role, long deadline) throws IOException {
            connectCalls.add(role + " " + Arrays.toString(peerAddress));
            Chan p = byId.get(peerChannelId);
            if (!Arrays.equals(peerAddress, NODE_ADDRESS) || p == null) {
                throw new ConnectException("no channel " + peerChannelId + " at node " + Arrays.toString(peerAddress));
            }
            peer = p;
            name = (role == Role.ACTIVE ? "client#" : "server#") + id;
            channels.put(name, this);
        }

        @Override
        public boolean boundsEnforcedByTransport() {
            return true;
        }

        @Override
        public String peerName() {
            return name;
        }

        @Override
        public LocalRegion register(ByteBuffer buffer, Set<Access> access) {
            long base = nextAddress.getAndAdd(buffer.capacity() + 4096L);
            memory.put(base, new Mem(base, buffer, Set.copyOf(access)));
            byte[] key = ByteBuffer.allocate(8).putLong(base).array();
            return new LocalRegion() {
                @Override
                public long address() {
                    return base;
                }

                @Override
                public long length() {
                    return buffer.capacity();
                }

                @Override
                public RegionDescriptor descriptor() {
                    return new RegionDescriptor(base, buffer.capacity(), access, key);
                }

                @Override
                public void close() {
                    memory.remove(base);
                }
            };
        }

        @Override
        public RegisteredBuffer allocate(int length, Set<Access> access) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            LocalRegion region = register(buffer, access);
            if (!mapRings) {
                return new RegisteredBuffer(buffer, region);
            }
            ByteBuffer control = ByteBuffer.allocateDirect(128);
            controls.put(region.address(), control);
            return new RegisteredBuffer(buffer, region, control);
        }

        /** Like ucx-ffm on shared memory: rings are mapped, and reads do not advertise unless told to. */
        @Override
        public boolean placesWritesDirectly() {
            return !mapRings;
        }

        @Override
        public MappedRing mapRemote(RemoteRegion region) {
            if (!mapRings) {
                return null;
            }
            long base = ByteBuffer.wrap(region.descriptor().key()).getLong();
            Mem m = memory.get(base);
            ByteBuffer control = controls.get(base);
            return m == null || control == null ? null : new MappedRing(m.buffer().duplicate().clear(), control);
        }

        @Override
        public RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
            String refusal = refuseClientUnpacks;
            if (refusal != null && name.startsWith("client")) {
                throw new CommunicatorException(refusal);
            }
            return new RemoteRegion() {
                @Override
                public RegionDescriptor descriptor() {
                    return descriptor;
                }

                @Override
                public void close() {
                }
            };
        }

        @Override
        public int maxMessageSize() {
            return 4096;
        }

        @Override
        public void send(ByteBuffer message, Completion done) {
            ByteBuffer copy = copy(message);
            sends.incrementAndGet();
            submit(done, () -> {
                if (copy.get(0) == DataMessage.DATA_INLINE) {
                    IOException injected = failWrites.getAndSet(null);
                    if (injected != null) {
                        return injected;
                    }
                }
                if (copy.get(0) == DataMessage.DATA_INLINE && swapNextNotification && held == null) {
                    swapNextNotification = false;
                    held = copy;
                    return null;
                }
                peer.handler.onMessage(copy);
                if (held != null) {
                    ByteBuffer h = held;
                    held = null;
                    peer.handler.onMessage(h);
                }
                return null;
            });
        }

        @Override
        public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
                ByteBuffer notification, Completion done) {
            writes.incrementAndGet();
            ByteBuffer note = notification == null ? null : copy(notification);
            submit(done, () -> {
                IOException injected = failWrites.getAndSet(null);
                if (injected != null) {
                    return injected;
                }
                Mem from = memory.get(src.address());
                Mem to = find(dst.descriptor(), dstAddress, length, Access.REMOTE_WRITE);
                view(to, dstAddress, length).put(view(from, srcAddress, length));
                if (note != null) {
                    if (swapNextNotification && held == null) {
                        swapNextNotification = false;
                        held = note;
                        return null;
                    }
                    peer.handler.onMessage(note);
                    if (held != null) {
                        ByteBuffer h = held;
                        held = null;
                        peer.handler.onMessage(h);
                    }
                }
                return null;
            });
        }

        @Override
        public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
                Completion done) {
            submit(done, () -> {
                Mem from = find(src.descriptor(), srcAddress, length, Access.REMOTE_READ);
                Mem to = memory.get(dst.address());
                view(to, dstAddress, length).put(view(from, srcAddress, length));
                return null;
            });
        }

        /** An operation run on the delivery thread; returns an error to fail the completion with. */
        private interface Op {
            IOException run() throws IOException;
        }

        private void submit(Completion done, Op op) {
            try {
                deliver.execute(() -> {
                    if (vanished) {
                        done.failed(new CommunicatorException(name + ": connection closed"));
                        return;
                    }
                    IOException error;
                    try {
                        error = op.run();
                    } catch (IOException e) {
                        error = e;
                    }
                    if (error == null) {
                        done.completed();
                    } else {
                        done.failed(error);
                    }
                });
            } catch (RejectedExecutionException e) {
                done.failed(new CommunicatorException(name + ": connection closed"));
            }
        }

        /** This side goes silent: nothing it sends arrives, and its close tells the peer nothing. */
        void mute() {
            closed = true;
            deliver.shutdownNow();
        }

        /**
         * This side hangs like a stopped process: nothing it sends or writes reaches the peer any more (its delivery
         * thread waits) until {@link #resume()}; the peer is told nothing.
         */
        void hang() {
            deliver.execute(() -> {
                try {
                    resumed.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }

        void resume() {
            resumed.countDown();
        }

        /** The peer vanishes: this side's handler gets an error; the peer gets nothing more. */
        void vanish() {
            Chan p = peer;
            p.vanished = true;
            p.closed = true;
            p.deliver.shutdownNow();
            deliver.execute(() -> handler.onError(new CommunicatorException(name + ": peer vanished")));
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            byId.remove(id);
            Chan p = peer;
            if (p == null) {
                deliver.shutdown();
                return;
            }
            if (closeOvertakesMessages) {
                deliver.shutdownNow();
                p.handler.onError(new CommunicatorException(p.name + ": peer closed"));
                return;
            }
            // like a flushing close: what was issued is delivered first, then the peer learns the end
            try {
                deliver.execute(() -> {
                    if (!p.closed) {
                        p.handler.onError(new CommunicatorException(p.name + ": peer closed"));
                    }
                });
            } catch (RejectedExecutionException e) {
                // this side vanished already
            }
            deliver.shutdown();
            try {
                deliver.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static ByteBuffer copy(ByteBuffer b) {
        return ByteBuffer.allocate(b.remaining()).put(b.duplicate()).flip();
    }
}
