package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.IbvWC;
import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.verbs.VerbsMemory.Local;
import io.rdmacomm.rdma.verbs.VerbsMemory.Remote;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RC queue pair as an {@link RdmaChannel}: the connection's state, its progress thread and close, over its
 * parts: {@link VerbsCalls} (slot memory and DiSNI's stateful calls), {@link VerbsMemory} (regions and checks),
 * {@link Posting} (slots, credits and the queue) and {@link VerbsCompletions}.
 *
 * <p>Control messages are SENDs from registered send slots into receive slots the peer pre-posted. A write with a
 * notification is one post of two work requests, an unsignalled RDMA WRITE and a signalled SEND of the
 * notification: on an RC queue pair the notification's receive completes only after the write's data is placed
 * (IBTA o9-20), which is the guarantee the SPI asks for. Operations that do not fit (no credit, no free slot)
 * queue in order and go out as completions free resources. Handlers and completions are never called with this
 * channel's lock held; the parts' state is guarded by it.
 */
final class VerbsChannel implements RdmaChannel {
    private static final Logger LOG = LoggerFactory.getLogger(VerbsChannel.class);
    static final int AWAIT_MILLIS = 50;
    /**
     * How long one poll of a closing thread waits for completions: the thread reads the clock between polls, so a
     * close overruns its bound by at most this.
     */
    private static final int CLOSING_AWAIT_MILLIS = 1;
    private static final long CLOSE_FLUSH_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Verbs verbs;
    private final String peer;
    private final Settings settings;
    private final Runnable onClosed;
    private final VerbsMemory memory;
    private final VerbsCalls calls;
    private final Posting posting;
    private final VerbsCompletions completions;
    /** Close waits with it for posted work to complete; every batch of completions wakes it. */
    private final Waiter waiter;
    private final BooleanSupplier flushedOrBroken;

    // guarded by this
    private IOException failure;
    private boolean errorReported;
    private boolean closed;
    private boolean tornDown;
    private Thread progress;

    private volatile ChannelHandler handler;
    private volatile boolean stopping;
    private volatile boolean teardownByLoop;
    /** Polling on the closing thread failed: close stops waiting for completions. */
    private volatile boolean pollingBroken;

    /**
     * Registers the slot buffers, builds the stateful calls and pre-posts every receive. On failure everything
     * made here is released again; {@code verbs} itself stays with the caller.
     */
    VerbsChannel(Verbs verbs, String peer, Settings settings, ChannelHandler handler, Runnable onClosed)
            throws IOException {
        this.verbs = verbs;
        this.peer = peer;
        this.settings = settings;
        this.handler = handler;
        this.onClosed = onClosed;
        this.memory = new VerbsMemory(verbs, peer);
        this.calls = new VerbsCalls(verbs, settings, peer);
        this.posting = new Posting(this, calls, settings);
        this.completions = new VerbsCompletions(this, calls, posting, settings);
        this.waiter = new Waiter(0, null, () -> false, () -> "to " + peer);
        this.flushedOrBroken = () -> inFlight() == 0 || pollingBroken;
    }

    /** Sets the handler of a channel accepted by a listener, whose handler is known only after the connection. */
    void handler(ChannelHandler h) {
        this.handler = h;
    }

    ChannelHandler handler() {
        return handler;
    }

    /** Starts the progress thread; completions are delivered from then on. */
    synchronized void start() {
        if (progress == null && !closed) {
            progress = new Thread(this::progressLoop, "rdmacomm-rdma-verbs-progress");
            progress.setDaemon(true);
            progress.start();
        }
    }

    @Override
    public String peerName() {
        return peer;
    }

    @Override
    public int maxMessageSize() {
        return settings.slotSize() - VerbsCalls.HEADER_BYTES;
    }

    /** Channels made by rdma-cm have no node id of their own: a {@link VerbsNode} channel wraps them. */
    @Override
    public int localId() {
        return 0;
    }

    /** Connected by rdma-cm already ({@link VerbsConnector}, {@link VerbsListener}). */
    @Override
    public void connect(byte[] peerAddress, int peerChannelId, Role role, long deadline) {
        throw new IllegalStateException("a queue pair is connected by rdma-cm");
    }

    /** The NIC checks remote keys against registered bounds. */
    @Override
    public boolean boundsEnforcedByTransport() {
        return true;
    }

    @Override
    public LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return memory.register(buffer, access);
    }

    @Override
    public RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
        return memory.unpack(descriptor);
    }

    // ---- operations --------------------------------------------------------------------------------------------

    @Override
    public void send(ByteBuffer message, Completion done) {
        int length = message.remaining();
        IOException refused;
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            refused = refusal();
            if (refused == null && length > maxMessageSize()) {
                refused = new CommunicatorException("control message of " + length + " bytes to " + peer
                        + " exceeds the verbs provider's maximum of " + maxMessageSize());
            }
            if (refused == null) {
                refused = posting.message(message, done, after);
            }
        }
        finish(refused, done, after);
    }

    @Override
    public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
            ByteBuffer notification, Completion done) {
        IOException invalid = memory.check(src, srcAddress, dst, dstAddress, length, Access.REMOTE_WRITE);
        if (invalid == null && notification != null && notification.remaining() > maxMessageSize()) {
            invalid = new CommunicatorException("notification of " + notification.remaining() + " bytes to " + peer
                    + " exceeds the verbs provider's maximum of " + maxMessageSize());
        }
        if (invalid != null) {
            done.failed(invalid);
            return;
        }
        if (length == 0) {
            if (notification == null) {
                done.completed();
            } else {
                send(notification, done);
            }
            return;
        }
        IOException refused;
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            refused = refusal();
            if (refused == null) {
                refused = posting.write((Local) src, srcAddress, (Remote) dst, dstAddress, length, notification, done,
                        after);
            }
        }
        finish(refused, done, after);
    }

    @Override
    public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
            Completion done) {
        IOException invalid = memory.check(dst, dstAddress, src, srcAddress, length, Access.REMOTE_READ);
        if (invalid != null) {
            done.failed(invalid);
            return;
        }
        if (length == 0) {
            done.completed();
            return;
        }
        IOException refused;
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            refused = refusal();
            if (refused == null) {
                refused = posting.read((Local) dst, dstAddress, (Remote) src, srcAddress, length, done, after);
            }
        }
        finish(refused, done, after);
    }

    private IOException refusal() {
        if (closed) {
            return new ClosedChannelException();
        }
        if (failure != null) {
            return new CommunicatorException("the verbs connection to " + peer + " has failed: "
                    + failure.getMessage(), failure);
        }
        return null;
    }

    /** With the lock held: whether the connection neither failed nor closed. */
    boolean usableLocked() {
        return failure == null && !closed;
    }

    private static void finish(IOException refused, Completion done, List<Runnable> after) {
        if (refused != null) {
            done.failed(refused);
        }
        for (Runnable r : after) {
            r.run();
        }
    }

    // ---- completions ---------------------------------------------------------------------------------------------

    /** Polls the completion queue once and handles what it returned; returns the number of completions. */
    int progressOnce() throws IOException {
        int n = completions.progressOnce();
        if (n > 0) {
            waiter.wake();
        }
        return n;
    }

    /** With the lock held: a post failed, which fails the connection too. */
    IOException postFailed(String what, Exception e, List<Runnable> after) {
        CommunicatorException cause = new CommunicatorException("posting a " + what + " to " + peer + " failed: "
                + e.getMessage(), e);
        failLocked(cause, after);
        return cause;
    }

    /** With the lock held: any error but a flush leaves the queue pair in the error state: the connection is over. */
    void failOnError(IbvWC wc, List<Runnable> after) {
        int status = wc.getStatus();
        if (status == VerbsCompletions.FLUSHED) {
            return;
        }
        failLocked(new CommunicatorException("the queue pair to " + peer + " entered the error state after "
                + VerbsCompletions.statusName(status) + "; the connection cannot be used any more", status, null),
                after);
    }

    /** With the lock held: the failure of the operation {@code what} that {@code wc} completed. */
    IOException completionError(String what, IbvWC wc) {
        return VerbsCompletions.error(what, wc, peer, closed, failure);
    }

    // ---- failure and close --------------------------------------------------------------------------------------

    /** The peer disconnected (rdma-cm event) or the connection broke underneath. */
    void fail(IOException cause) {
        List<Runnable> after = new ArrayList<>(1);
        synchronized (this) {
            failLocked(cause, after);
        }
        for (Runnable r : after) {
            r.run();
        }
    }

    /** With the lock held: records the first failure, fails what is queued, flushes what is posted. */
    void failLocked(IOException cause, List<Runnable> after) {
        if (failure != null || closed) {
            return;
        }
        failure = cause;
        IOException refused = refusal();
        posting.failQueued(refused, after);
        // Flushes whatever is still posted, so its completions come back failed rather than never.
        verbs.disconnect();
        ChannelHandler h = handler;
        if (!errorReported && h != null) {
            errorReported = true;
            after.add(() -> h.onError(cause));
        }
    }

    @Override
    public void close() {
        Thread progressThread;
        List<Runnable> after = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            posting.failQueued(new AsynchronousCloseException(), after);
            progressThread = progress;
        }
        memory.refuse();
        for (Runnable r : after) {
            r.run();
        }
        verbs.disconnect();
        if (progressThread == Thread.currentThread()) {
            // Closed from a handler: the progress loop tears down once the handler returns.
            teardownByLoop = true;
            stopping = true;
            return;
        }
        awaitFlush(progressThread != null);
        stopping = true;
        if (progressThread != null) {
            try {
                progressThread.join(TimeUnit.SECONDS.toMillis(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (progressThread.isAlive()) {
                LOG.warn("the progress thread of the verbs connection to {} did not stop within 2 s", peer);
            }
        }
        tearDown();
    }

    /**
     * Waits (bounded) until what is posted has completed, flushed by the disconnect. Without a progress thread
     * (never started), the closing thread polls the completion queue itself.
     */
    private void awaitFlush(boolean progressRuns) {
        if (!progressRuns) {
            // polling here for the whole bound, not through a Waiter: a Waiter lets a virtual thread spin only briefly
            // and then park, and with no progress thread nothing would poll the queue or wake it
            long deadline = System.nanoTime() + CLOSE_FLUSH_NANOS;
            while (!flushedOrBroken.getAsBoolean()) {
                if (System.nanoTime() - deadline >= 0) {
                    LOG.debug("draining completions of the connection to {} while closing: {} work requests still"
                            + " posted after {} ms", peer, inFlight(),
                            TimeUnit.NANOSECONDS.toMillis(CLOSE_FLUSH_NANOS));
                    return;
                }
                pollWhileClosing();
            }
            return;
        }
        try {
            waiter.await(flushedOrBroken, Waiter.deadlineAfter(CLOSE_FLUSH_NANOS), "close (flushing posted work)");
        } catch (IOException e) {
            LOG.debug("draining completions of the connection to {} while closing: {}", peer, e.toString());
        }
    }

    /** Progress on the closing thread where no progress thread runs. */
    private boolean pollWhileClosing() {
        if (pollingBroken) {
            return false;
        }
        try {
            return progressOnce() > 0 || verbs.awaitCompletions(CLOSING_AWAIT_MILLIS) && progressOnce() > 0;
        } catch (IOException | RuntimeException e) {
            LOG.debug("draining completions of the connection to {} while closing: {}", peer, e.toString());
            pollingBroken = true;
            return false;
        }
    }

    /** Send and RDMA slots whose work requests have not completed. */
    synchronized int inFlight() {
        return posting.inFlight();
    }

    private void tearDown() {
        List<Runnable> after = new ArrayList<>();
        synchronized (this) {
            if (tornDown) {
                return;
            }
            tornDown = true;
            posting.failOutstanding(after);
        }
        for (Runnable r : after) {
            r.run();
        }
        memory.releaseAll();
        calls.free(peer);
        verbs.destroy();
        onClosed.run();
    }

    private void progressLoop() {
        try {
            while (!stopping) {
                if (progressOnce() == 0) {
                    verbs.awaitCompletions(AWAIT_MILLIS);
                }
            }
        } catch (IOException | RuntimeException e) {
            fail(new CommunicatorException("polling completions of the connection to " + peer + " failed: "
                    + e.getMessage(), e));
        }
        if (teardownByLoop) {
            tearDown();
        }
    }
}
