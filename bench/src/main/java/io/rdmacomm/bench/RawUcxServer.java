package io.rdmacomm.bench;

import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.openucx.jucx.ucp.UcpConnectionRequest;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * The server side of the raw JUCX baseline: echo and sink over tagged messages (see {@link RawUcx} for the
 * messages). Everything runs on the thread that calls {@link #run()}: it owns the worker, spins on
 * {@code progress()} while it serves a client, and serves clients one at a time, in the order they connect
 * (a later client waits for its welcome). While no client is connected it progresses the worker every
 * {@link #IDLE_PARK_NANOS} so that it does not burn a core between runs; nothing measured waits on that.
 */
final class RawUcxServer {
    static final long IDLE_PARK_NANOS = 1_000_000L;
    /** How long a connected client may take to send its hello. */
    static final long HELLO_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** The largest echo message or sink message accepted. */
    static final long MAX_SIZE = Options.MAX_SIZE;

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

    /**
     * Serves until {@link #stop()}; then closes the listener, the worker and the context. A failing client only
     * ends its own session (and is logged).
     *
     * @throws IOException if the worker itself fails (everything is closed then too)
     */
    void run() throws IOException {
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
    void stop() {
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
            String refusal = refusal(kind, size, total);
            small.putLong(0, refusal == null ? RawUcx.STATUS_OK : RawUcx.STATUS_REFUSED);
            if (refusal != null) {
                // logged before the answer goes out, so whoever reads the answer can already read the log
                log.println("raw-ucx-serve: refused " + name + ": " + refusal);
                peer.await(peer.send(smallAddress, Long.BYTES, RawUcx.ANSWER), "answer");
                return;
            }
            peer.await(peer.send(smallAddress, Long.BYTES, RawUcx.ANSWER), "answer");
            if (kind == RawUcx.KIND_ECHO) {
                echo(peer, (int) size);
            } else {
                sink(peer, (int) size, total);
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                log.println("raw-ucx-serve: connection from " + name + " failed: " + e.getMessage());
            }
        } finally {
            // the client is gone once it said bye: a flush-close could wait for it in vain
            peer.close(true);
        }
    }

    static String refusal(int kind, long size, long total) {
        if (kind != RawUcx.KIND_ECHO && kind != RawUcx.KIND_SINK) {
            return "unknown kind " + kind;
        }
        if (size < 1 || size > MAX_SIZE) {
            return "message size " + size + " outside 1.." + MAX_SIZE;
        }
        if (kind == RawUcx.KIND_SINK ? total < 1 : total != 0) {
            return "bad sink total " + total + " for kind " + kind;
        }
        return null;
    }

    /** Receives any message of the session; echoes PINGs as PONGs until BYE. */
    private static void echo(RawUcx.Peer peer, int size) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(Math.max(size, Long.BYTES));
        long address = RawUcx.address(buffer);
        while (true) {
            UcpRequest in = peer.receiveAny(address, buffer.capacity());
            peer.await(in, "echo");
            int type = RawUcx.type(in.getSenderTag());
            if (type == RawUcx.BYE) {
                return;
            }
            if (type != RawUcx.PING) {
                throw new IOException("expected a ping or bye from " + peer.name + ", got message type " + type);
            }
            peer.await(peer.send(address, in.getRecvSize(), RawUcx.PONG), "echo");
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
            received += posted[slot].getRecvSize();
            posted[slot] = next < messages ? peer.receive(address, size, RawUcx.DATA) : null;
            next++;
        }
        ByteBuffer ack = ByteBuffer.allocateDirect(Long.BYTES).putLong(0, received);
        peer.await(peer.send(RawUcx.address(ack), Long.BYTES, RawUcx.ACK), "sink acknowledgement");
        peer.await(peer.receive(RawUcx.address(ack), Long.BYTES, RawUcx.BYE), "bye");
    }
}
