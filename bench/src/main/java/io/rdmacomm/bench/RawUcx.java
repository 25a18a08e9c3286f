package io.rdmacomm.bench;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.clientcomm.bench.Messages;
import io.rdmacomm.clientcomm.bench.Options;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;

/**
 * The raw JUCX baseline's common parts: what a hand-written JUCX program does, with no rdmacomm code in the data
 * path. One {@link UcpContext} (tag and RMA features), one {@link UcpWorker} in UCX's default single-thread mode,
 * progressed by busy-polling {@link UcpWorker#progress()} on the thread that opened it; endpoints in UCX's default
 * error mode (as rdma:// uses them, so that same-host peers get shared memory); buffers passed by address with
 * memory type {@link #HOST} (the {@code ByteBuffer} and memory-type-less overloads of JUCX 1.12 pass "unknown",
 * which newer libucp misreads).
 *
 * <p>Messages are tagged; a tag is {@code MAGIC << 32 | session << 8 | type}, so that a message of an earlier,
 * aborted session never matches a receive of the current one. Little data, big-endian:
 * <pre>
 * server → client  WELCOME (session 0)  int magic | short version | short 0 | long session
 * client → server  HELLO                int kind (1 echo, 2 sink, 3 put, 4 idle put) | int size | long total
 *                                       (echo: 0; sink, put: bytes; idle put: ms) | int target memory | int 0
 * server → client  ANSWER               long status (0 = accepted)
 * echo             PING → PONG          size bytes each way, until the client's BYE
 * sink             DATA ... → ACK       the announced total in messages of at most size bytes; ACK holds the count
 * put, idle put    REGION               long address | int control port (0: none) | int key length | remote key
 *                                       of a region of size bytes; then the client puts and flushes on its own
 * client → server  BYE                  8 bytes; the server answers with a BYE of its own; the client closes the
 *                                       endpoint, then the server
 * </pre>
 * A put run's target region is memory UCX allocated ({@code ucp_mem_map} ALLOCATE, as rdma:// allocates its
 * rings) or application memory that is only mapped ({@link TargetMemory}). During an idle put run the server does
 * not progress its worker: it waits on a plain TCP control connection (to the port in REGION) for a byte per
 * completed put and flush, and only after waiting the run's idle time in vain does it progress until the next byte;
 * so the flush time shows whether a put into that memory needs the target's progress.
 */
final class RawUcx {
    /** {@code UCS_MEMORY_TYPE_HOST}. */
    static final int HOST = 0;
    static final int MAGIC = 0x52554358;
    static final int VERSION = 2;
    static final long FULL_MASK = -1L;
    static final int MAX_SESSION = (1 << 24) - 1;

    static final int WELCOME = 1;
    static final int HELLO = 2;
    static final int ANSWER = 3;
    static final int PING = 4;
    static final int PONG = 5;
    static final int DATA = 6;
    static final int ACK = 7;
    static final int BYE = 8;
    static final int REGION = 9;

    static final int KIND_ECHO = 1;
    static final int KIND_SINK = 2;
    static final int KIND_PUT = 3;
    static final int KIND_IDLE_PUT = 4;

    static final long STATUS_OK = 0;
    static final long STATUS_REFUSED = 1;

    static final int WELCOME_LENGTH = 16;
    static final int HELLO_LENGTH = 24;
    /** The largest REGION message: remote keys of UCX 1.13 on shm and tcp take a few hundred bytes. */
    static final int REGION_MAX_LENGTH = 4096;
    /** Sends (client) and receives (server) a sink keeps in flight. */
    static final int WINDOW = 16;

    private RawUcx() {
    }

    /** Where a put run's target region lives; HELLO carries the ordinal (new values go at the end). */
    enum TargetMemory implements Options.Labelled {
        /** Allocated by UCX, which the shared-memory transports can map into the initiator. */
        UCX("ucx"),
        /** A direct buffer of the application, registered with {@code ucp_mem_map}. */
        MAPPED("mapped");

        private final String label;

        TargetMemory(String label) {
            this.label = label;
        }

        @Override
        public String label() {
            return label;
        }

        static Optional<TargetMemory> byId(int id) {
            TargetMemory[] all = values();
            return id >= 0 && id < all.length ? Optional.of(all[id]) : Optional.empty();
        }
    }

    static final class TargetMemoryConverter extends Options.LabelConverter<TargetMemory> {
        TargetMemoryConverter() {
            super(TargetMemory.class, "target memory");
        }
    }

    static long tag(long session, int type) {
        return ((long) MAGIC << 32) | (session << 8) | type;
    }

    /** The address of {@code buffer}'s first byte, whatever its position (UcxUtils.getAddress adds the position). */
    static long address(ByteBuffer buffer) {
        return UcxUtils.getAddress(buffer) - buffer.position();
    }

    /** Why JUCX cannot run here, for people: a missing libucx is named with the package that provides it. */
    static String unavailable(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        if (root instanceof ClassNotFoundException || root instanceof NoClassDefFoundError
                && !String.valueOf(root.getMessage()).startsWith("Could not initialize")) {
            return "the JUCX library (org.openucx:jucx) is not on the class path";
        }
        return "libucx is not installed or cannot be loaded (" + root.getMessage() + "); install it with"
                + " `apt-get install libucx0` (Debian/Ubuntu; JUCX 1.12.1 needs libucp.so.0)";
    }

    /** One context and one worker, used only by the thread that opened them. */
    static final class Node implements AutoCloseable {
        final UcpContext context;
        final UcpWorker worker;

        private Node(UcpContext context, UcpWorker worker) {
            this.context = context;
            this.worker = worker;
        }

        /**
         * Opens a context with the tag and RMA features and a worker without thread safety.
         *
         * @throws CommunicatorException if libucx is missing (naming the package) or UCX refuses
         */
        static Node open() throws CommunicatorException {
            UcpContext context;
            try {
                context = new UcpContext(new UcpParams().requestTagFeature().requestRmaFeature());
            } catch (LinkageError e) {
                throw new CommunicatorException(unavailable(e));
            } catch (RuntimeException e) {
                throw new CommunicatorException("UCX could not create a context: " + e.getMessage(), e);
            }
            try {
                return new Node(context, context.newWorker(new UcpWorkerParams()));
            } catch (RuntimeException e) {
                context.close();
                throw new CommunicatorException("UCX could not create a worker: " + e.getMessage(), e);
            }
        }

        void progress() throws IOException {
            try {
                worker.progress();
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException("UCX progress failed: " + e.getMessage(), e);
            }
        }

        /**
         * A region of {@code size} bytes for remote access: {@code buffer}'s memory, or, when it is null, memory UCX
         * allocates.
         *
         * @throws CommunicatorException if UCX refuses
         */
        UcpMemory map(ByteBuffer buffer, int size) throws CommunicatorException {
            UcpMemMapParams params = new UcpMemMapParams().setLength(size).setMemoryType(HOST);
            try {
                return context.memoryMap(buffer == null ? params.allocate() : params.setAddress(address(buffer)));
            } catch (RuntimeException e) {
                throw new CommunicatorException("UCX could not map a region of " + size + " bytes: "
                        + e.getMessage(), e);
            }
        }

        /** Progresses until {@code done}, without limit. */
        void progressUntil(BooleanSupplier done) throws IOException {
            while (!done.getAsBoolean()) {
                progress();
            }
        }

        @Override
        public void close() {
            worker.close();
            context.close();
        }
    }

    /**
     * One connected endpoint and the session it carries. Failures reported by UCX's endpoint error handler (a
     * refused connection, a peer that died) end every wait on it.
     */
    static final class Peer {
        final Node node;
        final String name;
        UcpEndpoint ep;
        long session;
        /** The error handler's status and message; written and read on the worker's thread only. */
        int errorStatus;
        String errorMessage;
        /** Checked by every wait; a server that is being stopped sets it. */
        private final BooleanSupplier abandoned;

        Peer(Node node, String name, BooleanSupplier abandoned) {
            this.node = node;
            this.name = name;
            this.abandoned = abandoned;
        }

        void onError(UcpEndpoint endpoint, int status, String message) {
            if (errorMessage == null) {
                errorStatus = status;
                errorMessage = message == null || message.isBlank() ? "status " + status : message;
            }
        }

        boolean failed() {
            return errorMessage != null;
        }

        UcpRequest send(long address, long length, int type) {
            return ep.sendTaggedNonBlocking(address, length, tag(session, type), null, HOST);
        }

        UcpRequest receive(long address, long length, int type) {
            return node.worker.recvTaggedNonBlocking(address, length, tag(session, type), FULL_MASK, null, HOST);
        }

        /** A put of {@code length} bytes at {@code address} into the peer's region at {@code remoteAddress}. */
        UcpRequest put(long address, long length, long remoteAddress, UcpRemoteKey key) {
            return ep.putNonBlocking(address, length, remoteAddress, key, null, HOST);
        }

        /** Completes when every put issued before it has been placed in the peer's memory. */
        UcpRequest flush() {
            return ep.flushNonBlocking(null);
        }

        /**
         * Busy-polls until {@code request} completes.
         *
         * @throws IOException if it completes with an error, or the endpoint fails first
         */
        void await(UcpRequest request, String what) throws IOException {
            awaitEither(request, request, what);
        }

        /** As {@link #await}, until {@code a} or {@code b} completes; returns that one. */
        UcpRequest awaitEither(UcpRequest a, UcpRequest b, String what) throws IOException {
            while (!a.isCompleted() && !b.isCompleted()) {
                if (errorMessage != null || abandoned.getAsBoolean()) {
                    throw failure(what);
                }
                node.progress();
            }
            UcpRequest done = a.isCompleted() ? a : b;
            check(done, what);
            return done;
        }

        /** As {@link #await}, for at most {@code timeoutNanos}; the request is cancelled when it times out. */
        void await(UcpRequest request, String what, long timeoutNanos) throws IOException {
            long deadline = System.nanoTime() + timeoutNanos;
            while (!request.isCompleted()) {
                if (errorMessage != null || abandoned.getAsBoolean()) {
                    throw failure(what);
                }
                if (System.nanoTime() - deadline > 0) {
                    node.worker.cancelRequest(request);
                    throw new SocketTimeoutException("no " + what + " from " + name + " within "
                            + timeoutNanos / 1_000_000 + " ms");
                }
                node.progress();
            }
            check(request, what);
        }

        private void check(UcpRequest request, String what) throws IOException {
            if (request.getStatus() != 0) {
                if (errorMessage != null) {
                    throw failure(what);
                }
                throw new IOException(what + " with " + name + " failed: UCX status " + request.getStatus());
            }
        }

        IOException failure(String what) {
            if (errorMessage == null) {
                return new IOException(what + " with " + name + " abandoned: stopping");
            }
            return new EOFException(what + " with " + name + " failed: " + errorMessage);
        }

        /**
         * Progresses until the peer has closed the endpoint (the error handler reports it) or {@code timeoutNanos}
         * pass.
         */
        void awaitClosedByPeer(long timeoutNanos) throws IOException {
            long deadline = System.nanoTime() + timeoutNanos;
            while (errorMessage == null && System.nanoTime() - deadline < 0) {
                node.progress();
            }
        }

        /** Closes the endpoint; waits (bounded) for UCX to finish with it. */
        void close(boolean force) {
            if (ep == null) {
                return;
            }
            try {
                UcpRequest r = force ? ep.closeNonBlockingForce() : ep.closeNonBlockingFlush();
                long deadline = System.nanoTime() + 2_000_000_000L;
                while (!r.isCompleted() && System.nanoTime() - deadline < 0) {
                    node.progress();
                }
            } catch (IOException | RuntimeException e) {
                // the endpoint is gone either way
            }
            ep = null;
        }
    }

    static String name(InetSocketAddress address) {
        return address == null ? "unknown peer" : address.getHostString() + ":" + address.getPort();
    }
}
