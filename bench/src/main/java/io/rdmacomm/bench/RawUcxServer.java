package io.rdmacomm.bench;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.clientcomm.bench.Options;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.ref.Reference;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.openucx.jucx.ucp.UcpConnectionRequest;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * The server side of the raw JUCX baseline: echo and sink over tagged messages, and the target region of put runs
 * (see {@link RawUcx} for the messages). Everything runs on the thread that calls {@link #run()}: it owns the
 * worker, spins on {@code progress()} while it serves a client (but for an idle put run), and serves clients one at
 * a time, in the order they connect (a later client waits for its welcome). While no client is connected it
 * progresses the worker every {@link #IDLE_PARK_NANOS} so that it does not burn a core between runs; nothing
 * measured waits on that.
 */
final class RawUcxServer implements ServeHarness.Server {
    static final long IDLE_PARK_NANOS = 1_000_000L;
    /** How long a client that has the answer to its bye may take to close its endpoint. */
    static final long CLOSE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** How long a connected client may take to send its hello. */
    static final long HELLO_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** The largest echo message, sink message or put region accepted. */
    static final long MAX_SIZE = Options.MAX_SIZE;
    /** The longest an idle put run may ask the server to sleep at a time. */
    static final long MAX_IDLE_MILLIS = 60_000;

    private final RawUcx.Node node;
    private final UcpListener listener;
    private final InetSocketAddress address;
    private final PrintStream log;
    /** Connection requests not served yet, added by the listener's handler during progress. */
    private final ArrayDeque<UcpConnectionRequest> pending;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean stopping;
    private long sessions;

    private RawUcxServer(RawUcx.Node node, UcpListener listener, ArrayDeque<UcpConnectionRequest> pending,
            InetSocketAddress address, PrintStream log) {
        this.node = node;
        this.pending = pending;
        this.listener = listener;
        this.address = address;
        this.log = log;
    }

    /**
     * Opens a context and worker and listens on {@code address} (port 0 picks one). The calling thread must be the
     * one that calls {@link #run()}.
     *
     * @throws CommunicatorException if libucx is missing or UCX cannot listen there
     */
    static RawUcxServer listen(InetSocketAddress address, PrintStream log) throws CommunicatorException {
        RawUcx.Node node = RawUcx.Node.open();
        ArrayDeque<UcpConnectionRequest> queue = new ArrayDeque<>();
        UcpListener listener;
        try {
            listener = node.worker.newListener(new UcpListenerParams().setSockAddr(address)
                    .setConnectionHandler(queue::add));
        } catch (RuntimeException e) {
            node.close();
            throw new CommunicatorException("UCX could not listen on " + RawUcx.name(address) + ": "
                    + e.getMessage(), e);
        }
        InetSocketAddress bound = new InetSocketAddress(address.getAddress(), listener.getAddress().getPort());
        return new RawUcxServer(node, listener, queue, bound, log);
    }

    /** The address actually bound. */
    InetSocketAddress address() {
        return address;
    }

    @Override
    public int port() {
        return address.getPort();
    }

    /**
     * Serves until {@link #stop()}; then closes the listener, the worker and the context. A failing client only
     * ends its own session (and is logged).
     *
     * @throws IOException if the worker itself fails (everything is closed then too)
     */
    @Override
    public void run() throws IOException {
        try {
            while (!stopping) {
                UcpConnectionRequest request = pending.poll();
                if (request == null) {
                    node.progress();
                    if (pending.isEmpty()) {
                        LockSupport.parkNanos(this, IDLE_PARK_NANOS);
                    }
                    continue;
                }
                serve(request);
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                throw new IOException("the UCX worker failed: " + e.getMessage(), e);
            }
        } finally {
            for (UcpConnectionRequest r : pending) {
                try {
                    r.reject();
                } catch (RuntimeException e) {
                    // closing anyway
                }
            }
            listener.close();
            node.close();
            stopped.countDown();
        }
    }

    /** Asks {@link #run()} to stop and waits (bounded) until it has closed everything. */
    @Override
    public void stop() {
        stopping = true;
        try {
            stopped.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void serve(UcpConnectionRequest request) {
        String name = RawUcx.name(request.getClientAddress());
        RawUcx.Peer peer = new RawUcx.Peer(node, name, () -> stopping);
        sessions = sessions == RawUcx.MAX_SESSION ? 1 : sessions + 1;
        try {
            peer.ep = node.worker.newEndpoint(new UcpEndpointParams().setConnectionRequest(request)
                    .setErrorHandler(peer::onError).setName("rdmacomm-raw-ucx"));
            ByteBuffer small = ByteBuffer.allocateDirect(RawUcx.HELLO_LENGTH);
            long smallAddress = RawUcx.address(small);
            small.putInt(0, RawUcx.MAGIC).putShort(4, (short) RawUcx.VERSION).putShort(6, (short) 0)
                    .putLong(8, sessions);
            peer.session = 0;
            peer.await(peer.send(smallAddress, RawUcx.WELCOME_LENGTH, RawUcx.WELCOME), "welcome");
            peer.session = sessions;
            UcpRequest hello = peer.receive(smallAddress, RawUcx.HELLO_LENGTH, RawUcx.HELLO);
            peer.await(hello, "hello", HELLO_TIMEOUT_NANOS);
            int kind = small.getInt(0);
            long size = Integer.toUnsignedLong(small.getInt(4));
            long total = small.getLong(8);
            RawUcx.TargetMemory memory = RawUcx.TargetMemory.byId(small.getInt(16)).orElse(null);
            String refusal = refusal(kind, size, total);
            if (refusal == null && memory == null) {
                refusal = "unknown target memory " + small.getInt(16);
            }
            small.putLong(0, refusal == null ? RawUcx.STATUS_OK : RawUcx.STATUS_REFUSED);
            if (refusal != null) {
                // logged first: once the client has the answer, the log says why
                log.println("raw-ucx-serve: refused " + name + ": " + refusal);
                peer.await(peer.send(smallAddress, Long.BYTES, RawUcx.ANSWER), "answer");
                return;
            }
            peer.await(peer.send(smallAddress, Long.BYTES, RawUcx.ANSWER), "answer");
            switch (kind) {
                case RawUcx.KIND_ECHO -> echo(peer, (int) size);
                case RawUcx.KIND_SINK -> sink(peer, (int) size, total);
                default -> put(peer, (int) size, kind == RawUcx.KIND_IDLE_PUT ? total : 0, memory);
            }
            // the client closes its endpoint once it has this answer: never before the bye arrived here
            peer.await(peer.send(smallAddress, Long.BYTES, RawUcx.BYE), "bye");
            // and closes it once the answer is there, with nothing of this side's left to flush
            peer.awaitClosedByPeer(CLOSE_TIMEOUT_NANOS);
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                log.println("raw-ucx-serve: connection from " + name + " failed: " + e.getMessage());
            }
        } finally {
            // the client is gone, or it failed: a flush-close could wait for it in vain
            peer.close(true);
        }
    }

    static String refusal(int kind, long size, long total) {
        if (kind < RawUcx.KIND_ECHO || kind > RawUcx.KIND_IDLE_PUT) {
            return "unknown kind " + kind;
        }
        if (size < 1 || size > MAX_SIZE) {
            return "message size " + size + " outside 1.." + MAX_SIZE;
        }
        return switch (kind) {
            case RawUcx.KIND_ECHO, RawUcx.KIND_SINK -> (kind == RawUcx.KIND_SINK ? total < 1 : total != 0)
                    ? "bad sink total " + total + " for kind " + kind : null;
            case RawUcx.KIND_PUT -> total < 1 ? "bad put total " + total : null;
            default -> total < 1 || total > MAX_IDLE_MILLIS
                    ? "idle time " + total + " ms outside 1.." + MAX_IDLE_MILLIS : null;
        };
    }

    /**
     * Echoes PINGs as PONGs until BYE. A receive of the exact tag is posted for each, the bye's from the start:
     * JUCX 1.12 reports neither the tag nor the size of a message that arrived before its receive was posted.
     */
    private void echo(RawUcx.Peer peer, int size) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        long address = RawUcx.address(buffer);
        ByteBuffer byeBuffer = ByteBuffer.allocateDirect(Long.BYTES);
        UcpRequest bye = peer.receive(RawUcx.address(byeBuffer), Long.BYTES, RawUcx.BYE);
        while (true) {
            UcpRequest ping = peer.receive(address, size, RawUcx.PING);
            if (peer.awaitEither(ping, bye, "echo") == bye) {
                node.worker.cancelRequest(ping);
                return;
            }
            peer.await(peer.send(address, size, RawUcx.PONG), "echo");
        }
    }

    /** Receives {@code total} bytes in messages of at most {@code size}, a window of receives posted ahead. */
    private static void sink(RawUcx.Peer peer, int size, long total) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        long address = RawUcx.address(buffer);
        long messages = (total + size - 1) / size;
        int window = (int) Math.min(RawUcx.WINDOW, messages);
        UcpRequest[] posted = new UcpRequest[window];
        long next = 0;
        for (; next < window; next++) {
            posted[(int) next] = peer.receive(address, size, RawUcx.DATA);
        }
        long received = 0;
        for (long done = 0; done < messages; done++) {
            int slot = (int) (done % window);
            peer.await(posted[slot], "sink");
            // the client's messages are size bytes but the last (JUCX 1.12 reports no size for a message that
            // arrived before its receive was posted)
            received += Math.min(size, total - done * size);
            posted[slot] = next < messages ? peer.receive(address, size, RawUcx.DATA) : null;
            next++;
        }
        ByteBuffer ack = ByteBuffer.allocateDirect(Long.BYTES).putLong(0, received);
        peer.await(peer.send(RawUcx.address(ack), Long.BYTES, RawUcx.ACK), "sink acknowledgement");
        peer.await(peer.receive(RawUcx.address(ack), Long.BYTES, RawUcx.BYE), "bye");
    }

    /**
     * A put run: maps a region of {@code size} bytes in {@code memory}, sends the client its address and remote key
     * (and, for an idle run, the port of a control connection), then waits for the bye, progressing the worker all
     * the while, or, for an idle run ({@code idleMillis > 0}), only when the client has been silent that long.
     */
    private void put(RawUcx.Peer peer, int size, long idleMillis, RawUcx.TargetMemory memory) throws IOException {
        ByteBuffer mapped = memory == RawUcx.TargetMemory.MAPPED ? ByteBuffer.allocateDirect(size) : null;
        UcpMemory region = node.map(mapped, size);
        try (ServerSocketChannel control = idleMillis > 0 ? ServerSocketChannel.open() : null) {
            if (control != null) {
                control.bind(new InetSocketAddress(address.getAddress(), 0));
            }
            ByteBuffer key = region.getRemoteKeyBuffer();
            ByteBuffer message = ByteBuffer.allocateDirect(16 + key.remaining()).putLong(region.getAddress())
                    .putInt(control == null ? 0 : control.socket().getLocalPort()).putInt(key.remaining()).put(key);
            peer.await(peer.send(RawUcx.address(message), message.position(), RawUcx.REGION), "region");
            if (control != null) {
                idle(peer, control, idleMillis);
            }
            ByteBuffer bye = ByteBuffer.allocateDirect(Long.BYTES);
            peer.await(peer.receive(RawUcx.address(bye), Long.BYTES, RawUcx.BYE), "bye");
        } finally {
            region.deregister();
            Reference.reachabilityFence(mapped);
        }
    }

    /**
     * Serves an idle put run's control connection without progressing the worker: every byte is a put and flush the
     * client completed; after {@code idleMillis} without one, progresses until the next byte (the client's flush
     * needed this side); returns when the client closes the connection.
     */
    private void idle(RawUcx.Peer peer, ServerSocketChannel control, long idleMillis) throws IOException {
        try (Selector selector = Selector.open()) {
            control.configureBlocking(false);
            SelectionKey accepting = control.register(selector, SelectionKey.OP_ACCEPT);
            if (selector.select(TimeUnit.NANOSECONDS.toMillis(HELLO_TIMEOUT_NANOS)) == 0) {
                throw new SocketTimeoutException("no control connection from " + peer.name + " within "
                        + TimeUnit.NANOSECONDS.toSeconds(HELLO_TIMEOUT_NANOS) + " s");
            }
            accepting.cancel();
            try (SocketChannel ch = control.accept()) {
                ch.configureBlocking(false);
                ch.register(selector, SelectionKey.OP_READ);
                ByteBuffer bytes = ByteBuffer.allocate(64);
                while (true) {
                    int n = ch.read(bytes.clear());
                    if (n == 0 && selector.select(idleMillis) == 0) {
                        while ((n = ch.read(bytes.clear())) == 0) {
                            if (stopping || peer.failed()) {
                                throw peer.failure("idle put");
                            }
                            node.progress();
                        }
                    }
                    selector.selectedKeys().clear();
                    if (n < 0) {
                        return;
                    }
                    if (stopping) {
                        throw peer.failure("idle put");
                    }
                }
            }
        }
    }
}
