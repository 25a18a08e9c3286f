package io.rdmacomm.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;
import io.rdmacomm.api.Communicator;

import java.util.ArrayList;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The {@link IoHandler} behind Netty's {@code MultiThreadIoEventLoopGroup} for communicator channels: one event loop
 * thread serves any number of {@link CommunicatorSocketChannel}s and {@link CommunicatorServerSocketChannel}s.
 *
 * <p>Readiness comes from the transports: a channel that wants to read submits {@link CommunicatorIoOps#READ}, which
 * arms {@link Communicator#notifyReadable}; the listener, run on a transport thread, queues the channel's
 * registration and wakes this loop, which then reads what {@link Communicator#available()} says is there without
 * blocking. When nothing is queued the loop sleeps until a listener, a task or a scheduled task wakes it: where its
 * connections' transport can ({@link Communicator#canBlockingPoll()}: rdma:// on UCX, tcp://) it sleeps in that
 * transport's own wait ({@link Communicator#blockingPoll}), taking arrivals in on this thread, so an arrival wakes
 * this thread alone instead of a progress thread that then wakes this one; otherwise it parks. With a
 * {@code busyPollNanos} above zero it instead spins that long in {@link Communicator#busyPoll} on one of its
 * connections (rdma:// takes arrivals on this thread then, not on a progress thread), then parks.
 *
 * <pre>{@code
 * EventLoopGroup group = new MultiThreadIoEventLoopGroup(CommunicatorIoHandler.newFactory("rdma"));
 * }</pre>
 */
public final class CommunicatorIoHandler implements IoHandler {

    /** The scheme an {@link java.net.InetSocketAddress} maps to when neither the channel nor the factory says. */
    public static final String DEFAULT_SCHEME = "tcp";

    /**
     * {@code -Dio.rdmacomm.netty.blockingPoll=false}: an idle loop parks and a transport thread wakes it on every
     * arrival, instead of sleeping in the transport's own wait where it can ({@link Communicator#blockingPoll}).
     */
    private static final boolean BLOCKING_POLL =
            !"false".equals(System.getProperty("io.rdmacomm.netty.blockingPoll"));

    private final String defaultScheme;
    private final long busyPollNanos;
    private final ConcurrentLinkedQueue<Registration> ready = new ConcurrentLinkedQueue<>();
    /** ready's size (the queue's own size() walks it). */
    private final AtomicInteger readyCount = new AtomicInteger();
    private final Set<Registration> registrations = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    private volatile Thread thread;
    /** What {@link #idle} waits in while it sleeps in a communicator's {@link Communicator#blockingPoll}. */
    private volatile Communicator waitingOn;
    /** The communicator {@link #idle} polls or waits on, whether it can wait, and when it was chosen; the loop's. */
    private Communicator pollOn;
    private boolean pollOnWaits;
    private int pollOnVersion = -1;
    /**
     * Counts registrations, cancellations and connects: a loop whose chosen communicator cannot wait looks again
     * after one.
     */
    private final AtomicInteger registrationsChanged = new AtomicInteger();
    private final BooleanSupplier readyOrWoken = () -> !ready.isEmpty() || wakeupPending.get();

    private CommunicatorIoHandler(String defaultScheme, long busyPollNanos) {
        this.defaultScheme = defaultScheme;
        this.busyPollNanos = busyPollNanos;
    }

    /**
     * Registers a channel's {@code handle} with its loop (a handler of this class): {@code registered} takes the
     * registration, then {@code promise} succeeds; or the promise fails with why not.
     */
    static void register(Channel channel, IoHandle handle, ChannelPromise promise,
            Consumer<IoRegistration> registered) {
        ((IoEventLoop) channel.eventLoop()).register(handle).addListener(f -> {
            if (f.isSuccess()) {
                registered.accept((IoRegistration) f.getNow());
                promise.setSuccess();
            } else {
                promise.setFailure(f.cause());
            }
        });
    }

    /** A factory whose loops map {@link java.net.InetSocketAddress}es to {@code tcp://}. */
    public static IoHandlerFactory newFactory() {
        return newFactory(DEFAULT_SCHEME);
    }

    /**
     * A factory whose loops map {@link java.net.InetSocketAddress}es to {@code scheme://host:port} (a channel's
     * {@link CommunicatorChannelOption#SCHEME} overrides it; a {@link CommunicatorAddress} carries its own).
     */
    public static IoHandlerFactory newFactory(String scheme) {
        return newFactory(scheme, 0);
    }

    /**
     * As {@link #newFactory(String)}; an idle loop spins up to {@code busyPollNanos} in {@link Communicator#busyPoll}
     * before it parks (lower latency on rdma://, a core burnt while spinning; 0 never spins).
     */
    public static IoHandlerFactory newFactory(String scheme, long busyPollNanos) {
        Objects.requireNonNull(scheme, "scheme");
        if (busyPollNanos < 0) {
            throw new IllegalArgumentException("busyPollNanos < 0: " + busyPollNanos);
        }
        return executor -> new CommunicatorIoHandler(scheme, busyPollNanos);
    }

    /** A channel of this loop got its communicator (a client connected): the loop chooses what to wait on again. */
    void communicatorChanged() {
        registrationsChanged.incrementAndGet();
    }

    String defaultScheme() {
        return defaultScheme;
    }

    @Override
    public void initialize() {
        thread = Thread.currentThread();
    }

    @Override
    public int run(IoHandlerContext context) {
        thread = Thread.currentThread();
        if (ready.isEmpty() && context.canBlock()) {
            idle(context);
        }
        wakeupPending.set(false);
        int handled = 0;
        // only what is queued now: a handle that re-arms and is ready again at once waits for the next round, after
        // the loop's tasks
        for (int n = readyCount.get(); n > 0; n--) {
            Registration r = ready.poll();
            if (r == null) {
                break;
            }
            readyCount.decrementAndGet();
            r.queued.set(false);
            if (r.valid) {
                handled++;
                r.handle.handle(r, CommunicatorIoEvent.READY);
            }
        }
        return handled;
    }

    private void idle(IoHandlerContext context) {
        Communicator on = anyCommunicator();
        if (busyPollNanos > 0 && on != null && on.busyPoll(busyPollNanos, readyOrWoken)) {
            return;
        }
        long delay = context.delayNanos(System.nanoTime());
        if (delay <= 0 || readyOrWoken.getAsBoolean()) {
            return;
        }
        // not after a spin: its end hands progress back to the transport's thread, which a wait right after would
        // race on the same event descriptor (measured worse on kv-server's loops, which spin first)
        if (BLOCKING_POLL && busyPollNanos == 0 && on != null && on.canBlockingPoll()) {
            // sleep in the transport's own wait: an arrival then wakes this thread, not a progress thread that
            // would wake it (wakeup() ends the wait through wakeBlockingPoll while waitingOn is set)
            waitingOn = on;
            try {
                if (readyOrWoken.getAsBoolean()
                        || on.blockingPoll(Math.min(delay, TimeUnit.SECONDS.toNanos(1)), readyOrWoken)) {
                    return;
                }
            } finally {
                waitingOn = null;
            }
            // the time is up, or another thread waits on that transport: park for what is left, if anything
            delay = context.delayNanos(System.nanoTime());
            if (delay <= 0 || readyOrWoken.getAsBoolean()) {
                return;
            }
        }
        // a wakeup between the checks and the park leaves a permit: the park returns at once
        LockSupport.parkNanos(this, Math.min(delay, TimeUnit.SECONDS.toNanos(1)));
    }

    /**
     * An open communicator of this loop's channels to poll or wait on: one that can {@link
     * Communicator#blockingPoll} if any can, else any (a server channel's listening communicator can neither). The
     * choice is kept while it stays open and can still wait (a tcp:// connection whose remote memory was used no longer
     * can), or, if it could not, until the loop's channels change.
     */
    private Communicator anyCommunicator() {
        Communicator c = pollOn;
        int version = registrationsChanged.get();
        if (c != null && c.isOpen() && (pollOnWaits ? c.canBlockingPoll() : version == pollOnVersion)) {
            return c;
        }
        Communicator fallback = null;
        for (Registration r : registrations) {
            c = r.handle.communicator();
            if (c == null || !c.isOpen()) {
                continue;
            }
            if (c.canBlockingPoll()) {
                fallback = c;
                pollOnWaits = true;
                break;
            }
            if (fallback == null) {
                fallback = c;
                pollOnWaits = false;
            }
        }
        pollOn = fallback;
        pollOnVersion = version;
        return fallback;
    }

    @Override
    public void prepareToDestroy() {
        for (Registration r : new ArrayList<>(registrations)) {
            try {
                r.handle.close();
            } catch (Exception ignored) {
                // closing on the way out: nothing to tell
            }
        }
    }

    @Override
    public void destroy() {
        registrations.clear();
        ready.clear();
        readyCount.set(0);
    }

    @Override
    public IoRegistration register(IoHandle handle) {
        Registration r = new Registration((CommunicatorIoHandle) handle);
        registrations.add(r);
        registrationsChanged.incrementAndGet();
        handle.registered();
        return r;
    }

    @Override
    public void wakeup() {
        if (wakeupPending.compareAndSet(false, true)) {
            Thread t = thread;
            if (t != null && t != Thread.currentThread()) {
                // idle() sets waitingOn before it looks at wakeupPending, this reads it after setting that: a loop
                // about to wait either sees the wakeup or is woken out of the wait
                Communicator w = waitingOn;
                if (w != null) {
                    w.wakeBlockingPoll();
                } else {
                    LockSupport.unpark(t);
                }
            }
        }
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return CommunicatorIoHandle.class.isAssignableFrom(handleType);
    }

    /** One handle's registration; also the readiness listener it arms, so arming allocates nothing. */
    final class Registration implements IoRegistration, Runnable {
        final CommunicatorIoHandle handle;
        final AtomicBoolean queued = new AtomicBoolean();
        volatile boolean valid = true;

        Registration(CommunicatorIoHandle handle) {
            this.handle = handle;
        }

        CommunicatorIoHandler handler() {
            return CommunicatorIoHandler.this;
        }

        @SuppressWarnings("unchecked")
        @Override
        public <T> T attachment() {
            return (T) CommunicatorIoHandler.this;
        }

        /**
         * {@link CommunicatorIoOps#READ}: arms the communicator's readiness; returns 0, or -1 if it cannot tell
         * (no communicator, or a transport without {@code notifyReadable}, such as tcp:// with wire=raw).
         * {@link CommunicatorIoOps#NOTIFY}: queues the handle now.
         */
        @Override
        public long submit(IoOps ops) {
            if (!valid) {
                return -1;
            }
            if (ops == CommunicatorIoOps.NOTIFY) {
                run();
                return 0;
            }
            if (ops == CommunicatorIoOps.READ) {
                Communicator c = handle.communicator();
                return c != null && c.notifyReadable(this) ? 0 : -1;
            }
            throw new IllegalArgumentException("not a CommunicatorIoOps: " + ops);
        }

        /** The readiness listener: queues this registration and wakes the loop; never blocks. */
        @Override
        public void run() {
            if (valid && queued.compareAndSet(false, true)) {
                readyCount.incrementAndGet();
                ready.add(this);
                wakeup();
            }
        }

        @Override
        public boolean isValid() {
            return valid;
        }

        @Override
        public boolean cancel() {
            if (!valid) {
                return false;
            }
            valid = false;
            registrations.remove(this);
            registrationsChanged.incrementAndGet();
            handle.unregistered();
            return true;
        }
    }
}
