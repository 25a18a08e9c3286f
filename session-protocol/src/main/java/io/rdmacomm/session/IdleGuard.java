package io.rdmacomm.session;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's peer that is closed when the server has waited on it for longer than the idle timeout: blocked in a
 * read that brings nothing, or in a write or sync the client does not drain. Time the server spends on its own
 * work (a routine, a group filling up) does not count. Works on every transport: closing unblocks the waiting
 * call, which then fails with a {@link SocketTimeoutException} naming the timeout. Every call is forwarded.
 */
final class IdleGuard implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(IdleGuard.class);
    private static final long NOT_WAITING = Long.MIN_VALUE;

    private final Communicator peer;
    private final long timeout;
    private final ScheduledExecutorService timer;
    private volatile long readingSince = NOT_WAITING;
    private volatile long writingSince = NOT_WAITING;
    private volatile boolean expired;
    private volatile ScheduledFuture<?> check;

    private IdleGuard(Communicator peer, Duration timeout, ScheduledExecutorService timer) {
        this.peer = peer;
        this.timeout = timeout.toNanos();
        this.timer = timer;
    }

    /** {@code peer}, closed once it keeps the server waiting for {@code timeout}; itself when the timeout is 0. */
    static Communicator watch(Communicator peer, Duration timeout, ScheduledExecutorService timer) {
        if (timeout.isZero()) {
            return peer;
        }
        IdleGuard guard = new IdleGuard(peer, timeout, timer);
        guard.schedule(guard.timeout);
        return guard;
    }

    private void schedule(long delay) {
        if (peer.isOpen()) {
            check = timer.schedule(this::check, delay, TimeUnit.NANOSECONDS);
        }
    }

    private void check() {
        long now = System.nanoTime();
        long since = Math.min(startOf(readingSince, now), startOf(writingSince, now));
        long waited = now - since;
        if (waited < timeout) {
            schedule(timeout - waited);
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

    private static long startOf(long since, long now) {
        return since == NOT_WAITING ? now : since;
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

    /** A call on the peer that may wait for it. */
    private interface Waiting<T> {
        T call() throws IOException;
    }

    /** Runs {@code call}, counting the time it waits as the client's (reading, or writing and one-sided). */
    private <T> T waiting(boolean reading, Waiting<T> call) throws IOException {
        long now = System.nanoTime();
        if (reading) {
            readingSince = now;
        } else {
            writingSince = now;
        }
        try {
            return call.call();
        } catch (IOException e) {
            throw translate(e);
        } finally {
            if (reading) {
                readingSince = NOT_WAITING;
            } else {
                writingSince = NOT_WAITING;
            }
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return waiting(true, () -> peer.read(dst));
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        waiting(false, () -> {
            peer.write(src);
            return null;
        });
    }

    @Override
    public void sync() throws IOException {
        waiting(false, () -> {
            peer.sync();
            return null;
        });
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
        waiting(false, () -> {
            peer.put(src, remote, offset);
            return null;
        });
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        waiting(false, () -> {
            peer.get(remote, offset, dst);
            return null;
        });
    }
}
