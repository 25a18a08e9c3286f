package io.rdmacomm.session;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.FieldHandles;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's peer that is closed when the server has waited on it for longer than the idle timeout: blocked in a
 * read that brings nothing, or in a write or sync the client does not drain. Time the server spends on its own
 * work (a routine, a group filling up) does not count. Works on every transport: closing unblocks the waiting
 * call, which then fails with a {@link SocketTimeoutException} naming the timeout. Every call is forwarded.
 *
 * <p>The calls that may wait cost no clock read and no allocation: each marks itself waiting in a word of its kind
 * (reading, or writing and one-sided) with a number no call had before, and clears the mark when it returns. A
 * timer looks at the words every quarter of the timeout; a word that holds the same waiting call for the timeout
 * closes the peer, so a wait is noticed between the timeout and a quarter more.
 */
final class IdleGuard implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(IdleGuard.class);
    private static final VarHandle READING = FieldHandles.of(MethodHandles.lookup(), "reading", long.class);
    private static final VarHandle WRITING = FieldHandles.of(MethodHandles.lookup(), "writing", long.class);

    private final Communicator peer;
    private final long timeout;
    private final long period;
    private final ScheduledExecutorService timer;
    /** The read under way (odd: a number no read had before) or none (even); see {@link #begin}. */
    @SuppressWarnings("unused") // through READING
    private long reading;
    /** The same for writes, syncs, puts and gets. */
    @SuppressWarnings("unused") // through WRITING
    private long writing;
    /** What the timer saw last in each word, and when it first saw it (the timer's own). */
    private final long[] seen = new long[2];
    private final long[] seenSince = new long[2];
    private volatile boolean expired;
    private volatile ScheduledFuture<?> check;

    private IdleGuard(Communicator peer, Duration timeout, ScheduledExecutorService timer) {
        this.peer = peer;
        this.timeout = timeout.toNanos();
        this.period = Math.max(this.timeout / 4, TimeUnit.MILLISECONDS.toNanos(1));
        this.timer = timer;
    }

    /** {@code peer}, closed once it keeps the server waiting for {@code timeout}; itself when the timeout is 0. */
    static Communicator watch(Communicator peer, Duration timeout, ScheduledExecutorService timer) {
        if (timeout.isZero()) {
            return peer;
        }
        IdleGuard guard = new IdleGuard(peer, timeout, timer);
        guard.schedule();
        return guard;
    }

    private void schedule() {
        if (peer.isOpen()) {
            check = timer.schedule(this::check, period, TimeUnit.NANOSECONDS);
        }
    }

    private void check() {
        long now = System.nanoTime();
        long waited = Math.max(waited(0, (long) READING.getOpaque(this), now),
                waited(1, (long) WRITING.getOpaque(this), now));
        if (waited < timeout) {
            schedule();
            return;
        }
        expired = true;
        LOG.info("session from {} kept the server waiting for {} ms (idle timeout); closed", peer.peerName(),
                TimeUnit.NANOSECONDS.toMillis(waited));
        try {
            peer.close();
        } catch (IOException e) {
            LOG.debug("closing idle session {} failed", peer.peerName(), e);
        }
    }

    /** How long the call in word {@code i} (now {@code word}) has been seen waiting; 0 if none waits. */
    private long waited(int i, long word, long now) {
        if ((word & 1) == 0) {
            seen[i] = word;
            return 0;
        }
        if (word != seen[i]) {
            seen[i] = word;
            seenSince[i] = now;
            return 0;
        }
        return now - seenSince[i];
    }

    /** Marks a call of the word's kind waiting: odd, and above every number before; returns the mark. */
    private long begin(VarHandle word) {
        long call = ((long) word.getOpaque(this) | 1) + 2;
        word.setRelease(this, call);
        return call;
    }

    /**
     * The call returned: its word is even again. (Calls of one kind from two threads at once share the word, as a
     * session's calls of one kind come from one thread: the first to return clears it for both.)
     */
    private void end(VarHandle word, long call) {
        word.setRelease(this, call - 1);
    }

    private IOException translate(IOException e) {
        if (!expired) {
            return e;
        }
        SocketTimeoutException t = new SocketTimeoutException("session from " + peer.peerName()
                + " closed: the client kept the server waiting for " + TimeUnit.NANOSECONDS.toMillis(timeout)
                + " ms (idle timeout)");
        t.initCause(e);
        return t;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        long call = begin(READING);
        try {
            return peer.read(dst);
        } catch (IOException e) {
            throw translate(e);
        } finally {
            end(READING, call);
        }
    }

    @Override
    public int available() throws IOException {
        return peer.available();
    }

    @Override
    public boolean notifyReadable(Runnable listener) {
        return peer.notifyReadable(listener);
    }

    @Override
    public boolean busyPoll(long nanos, BooleanSupplier until) {
        return peer.busyPoll(nanos, until);
    }

    @Override
    public boolean canBlockingPoll() {
        return peer.canBlockingPoll();
    }

    @Override
    public boolean blockingPoll(long nanos, BooleanSupplier until) {
        return peer.blockingPoll(nanos, until);
    }

    @Override
    public void wakeBlockingPoll() {
        peer.wakeBlockingPoll();
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        long call = begin(WRITING);
        try {
            peer.write(src);
        } catch (IOException e) {
            throw translate(e);
        } finally {
            end(WRITING, call);
        }
    }

    @Override
    public int tryWrite(ByteBuffer src) throws IOException {
        return peer.tryWrite(src);
    }

    @Override
    public long tryWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return peer.tryWrite(srcs, offset, length);
    }

    @Override
    public void sync() throws IOException {
        long call = begin(WRITING);
        try {
            peer.sync();
        } catch (IOException e) {
            throw translate(e);
        } finally {
            end(WRITING, call);
        }
    }

    /** Ends the watch, so no timer task outlives the session. */
    void stopWatching() {
        ScheduledFuture<?> c = check;
        if (c != null) {
            c.cancel(false);
        }
    }

    @Override
    public void close() throws IOException {
        stopWatching();
        peer.close();
    }

    @Override
    public Endpoint endpoint() {
        return peer.endpoint();
    }

    @Override
    public String peerName() {
        return peer.peerName();
    }

    @Override
    public void serve() throws IOException {
        peer.serve();
    }

    @Override
    public Communicator accept() throws IOException {
        return peer.accept();
    }

    @Override
    public void connect() throws IOException {
        peer.connect();
    }

    @Override
    public boolean isOpen() {
        return peer.isOpen();
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return peer.register(buffer, access);
    }

    @Override
    public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        long call = begin(WRITING);
        try {
            peer.put(src, remote, offset);
        } catch (IOException e) {
            throw translate(e);
        } finally {
            end(WRITING, call);
        }
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        long call = begin(WRITING);
        try {
            peer.get(remote, offset, dst);
        } catch (IOException e) {
            throw translate(e);
        } finally {
            end(WRITING, call);
        }
    }
}
