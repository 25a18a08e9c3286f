package io.rdmacomm.kvstore;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.support.RateLimitedLog;
import io.rdmacomm.api.support.ServerThreads;
import io.rdmacomm.netty.CommunicatorAddress;
import io.rdmacomm.netty.CommunicatorIoHandler;
import io.rdmacomm.netty.CommunicatorServerSocketChannel;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kv store server: the memory pool, the gRPC control plane and the data plane's listener, started together
 * and closed together.
 *
 * <pre>{@code
 * try (KvServer server = KvServer.start(KvServerConfig.of("127.0.0.1", 0, Endpoint.parse("rdma://127.0.0.1:0")))) {
 *     server.awaitClosed();
 * }
 * }</pre>
 *
 * <p>The control plane is gRPC on TCP, or, with {@link KvServerConfig#controlEndpoint()}, gRPC on an {@code rdma://}
 * or {@code tcp://} communicator endpoint through transport-netty's channels.
 *
 * <p>The pool is allocated once at start. On {@code rdma://} the transport registers it with each data connection
 * on its first one-sided operation (registration is per connection in this project's contract), so the data
 * endpoint's {@code maxRegistered} must hold the pool: unset, it is set to the pool's size plus 64m.
 */
public final class KvServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvServer.class);
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);
    private static final long REGISTRATION_HEADROOM = 64L << 20;
    /** Direct memory the server needs besides its pool: its connections' buffers, Netty's for the control plane. */
    static final long DIRECT_HEADROOM = 64L << 20;
    /** Event loop threads of a control plane on communicators (I/O only: the calls run on gRPC's executor). */
    private static final int CONTROL_LOOPS = Math.min(4, Runtime.getRuntime().availableProcessors());
    /** How long a session's thread spins for the next request on rdma:// before it parks (unless busyPoll is set). */
    static final String SESSION_SPIN = "10us";
    /**
     * The data endpoint's readTimeout under event loops, unless set: a loop's reads never wait, so it bounds how long
     * a reply's write waits for a client that reads nothing, during which the loop serves no other connection.
     */
    static final String LOOP_WRITE_TIMEOUT = "10s";

    private final KvServerConfig config;
    private final Store store;
    private final Sessions sessions;
    private final Communicator listener;
    private final Endpoint advertised;
    private final ScheduledExecutorService timer;
    private final Server grpc;
    /** The event loops of a control plane on communicators; null for gRPC on TCP. */
    private final EventLoopGroup controlLoops;
    private final Thread acceptor;
    /** The event loops serving attached connections, empty for a thread per connection. */
    private final DataLoop[] loops;
    private final Set<DataSession> connections = ConcurrentHashMap.newKeySet();
    private final ServerThreads threads = new ServerThreads();
    private final AtomicInteger threadNumbers = new AtomicInteger();
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile boolean closing;
    private final RateLimitedLog acceptFailures = new RateLimitedLog(LOG);
    private static final long ACCEPT_RETRY_MILLIS = 10;
    /** Data connections accepted, for the choice of their loop; the accepting thread's. */
    private long accepted;

    private KvServer(KvServerConfig config) throws IOException {
        this.config = config;
        this.store = new Store(allocatePool(config.memoryBytes()));
        this.sessions = new Sessions(config.maxSessions());
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "kv-timer"));
        Communicator l = null;
        Server g = null;
        EventLoopGroup group = null;
        try {
            l = Communicators.open(dataEndpoint(config));
            l.serve();
            this.advertised = advertise(l.endpoint());
            Endpoint control = config.controlEndpoint();
            NettyServerBuilder builder;
            if (control == null) {
                builder = NettyServerBuilder.forAddress(new InetSocketAddress(config.listenHost(),
                        config.listenPort()));
            } else {
                group = new MultiThreadIoEventLoopGroup(CONTROL_LOOPS, new DefaultThreadFactory("kv-control-"
                        + control.scheme(), true), CommunicatorIoHandler.newFactory(control.scheme()));
                builder = NettyServerBuilder.forAddress(new CommunicatorAddress(control.toString()))
                        .channelType(CommunicatorServerSocketChannel.class)
                        .bossEventLoopGroup(group)
                        .workerEventLoopGroup(group);
            }
            ControlConnections controlConnections = new ControlConnections(config.maxControlConnections());
            builder.addTransportFilter(controlConnections);
            builder.addService(new ControlService(store, sessions, config, advertised.toString(), timer,
                    this::stats, controlConnections));
            try {
                g = builder.build().start();
            } catch (IOException e) {
                throw new IOException("cannot serve the control plane on " + (control == null
                        ? config.listenHost() + ":" + config.listenPort() : control.toString()) + ": "
                        + e.getMessage() + (e.getCause() == null ? "" : ": " + e.getCause().getMessage()), e);
            }
        } catch (IOException | RuntimeException e) {
            if (l != null) {
                quietly(l);
            }
            if (group != null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
            timer.shutdownNow();
            throw e;
        }
        this.listener = l;
        this.grpc = g;
        this.controlLoops = group;
        this.acceptor = daemon(this::acceptLoop, "kv-data-accept");
        this.loops = new DataLoop[config.loops()];
        for (int i = 0; i < loops.length; i++) {
            loops[i] = new DataLoop("kv-data-loop-" + i, config.maxSessions(), config.loopSpin());
        }
    }

    /**
     * Allocates the pool, starts the control plane and the data plane's listener.
     *
     * @throws IOException if either address cannot be bound; nothing stays open
     */
    public static KvServer start(KvServerConfig config) throws IOException {
        KvServer s = new KvServer(config);
        for (DataLoop loop : s.loops) {
            loop.start();
        }
        s.acceptor.start();
        LOG.info("kv server: control {}, data {}, pool {}", s.controlAddress(), s.advertised,
                Units.formatSize(config.memoryBytes()));
        return s;
    }

    /**
     * The control plane's address as clients give it, with the port actually bound: {@code host:port} for gRPC on
     * TCP, else the endpoint's {@code scheme://host:port} (with its provider, if set).
     */
    public String controlAddress() {
        Endpoint control = config.controlEndpoint();
        if (control != null) {
            return advertise(control.withPort(grpc.getPort())).toString();
        }
        String host = config.listenHost();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + grpc.getPort();
    }

    /** The data plane's endpoint as clients are told it (the bound port, no server-side options). */
    public Endpoint dataEndpoint() {
        return advertised;
    }

    public KvStats stats() {
        Allocator a = store.allocator();
        return new KvStats(store.keys(), a.capacity(), a.usedBytes(), a.freeBytes(), a.largestFreePayload(),
                store.valueBytes(), sessions.size(), store.gets.sum(), store.puts.sum(), store.deletes.sum(),
                store.misses.sum(), store.errors.sum(), sessions.failed(), advertised.toString());
    }

    /**
     * Waits until {@code expected} sessions are open (sessions end on the threads serving their data connections,
     * after the client has gone); true if they are within {@code timeout}.
     */
    boolean awaitSessions(int expected, Duration timeout) throws InterruptedException {
        return sessions.awaitSize(expected, timeout);
    }

    /** Blocks until {@link #close()} has finished. */
    public void awaitClosed() throws InterruptedException {
        closed.await();
    }

    /** Waits up to {@code timeout} for {@link #close()} to finish; true if it has. */
    public boolean awaitClosed(Duration timeout) throws InterruptedException {
        return closed.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Stops both planes: refuses new sessions, ends every open one (their data connections close), and waits for
     * the threads serving them. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        try {
            grpc.shutdownNow();
            sessions.close();
            quietly(listener);
            for (DataSession c : connections) {
                c.close();
            }
            long deadline = System.nanoTime() + STOP_WAIT.toNanos();
            join(acceptor, deadline);
            for (Thread t : threads.joinAll(deadline)) {
                LOG.warn("kv server: session thread {} did not end within {} of the close", t.getName(), STOP_WAIT);
            }
            for (DataLoop loop : loops) {
                loop.stop(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            }
            grpc.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (controlLoops != null) {
                controlLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS)
                        .await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (controlLoops != null) {
                controlLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
            timer.shutdownNow();
            closed.countDown();
        }
    }

    private void acceptLoop() {
        while (!closing) {
            Communicator peer;
            try {
                peer = listener.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException | RuntimeException e) {
                if (closing) {
                    return;
                }
                // one peer's failure, or the process short of descriptors: the data plane serves on
                acceptFailures.warn("kv server: accepting a data connection failed: {}; retrying", e.toString());
                pauseAfterFailure();
                continue;
            }
            DataLoop loop = loops.length == 0 ? null : loops[(int) (accepted++ % loops.length)];
            DataSession c = new DataSession(peer, store, sessions, config, loop, connections);
            // on a loop, the connection stays open (and in connections) after run returns
            // the server keeps ended threads for a while (threads): the task lets go of the session
            Thread t = daemon(ServerThreads.releasing(c::run), "kv-session-" + threadNumbers.incrementAndGet());
            connections.add(c);
            threads.add(t);
            if (closing) {
                c.close();
            }
            t.start();
            try {
                timer.schedule(c::closeIfUnattached, config.attachTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                c.close();
            }
        }
    }

    /** Waits a little after a failed accept, so a failure that repeats does not spin; close() ends the wait. */
    private void pauseAfterFailure() {
        try {
            closed.await(ACCEPT_RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ByteBuffer allocatePool(long bytes) throws IOException {
        String tooLarge = poolTooLarge(bytes, maxDirectMemory(), directMemoryUsed());
        if (tooLarge != null) {
            throw new IOException(tooLarge);
        }
        try {
            return ByteBuffer.allocateDirect((int) bytes);
        } catch (OutOfMemoryError e) {
            throw new IOException("cannot allocate the memory pool of " + Units.formatSize(bytes) + ": " + e.getMessage()
                    + "; give the JVM more direct memory (JAVA_OPTS=-XX:MaxDirectMemorySize=...) or a smaller --memory",
                    e);
        }
    }

    /**
     * Why a memory pool of {@code bytes} does not fit in the JVM's direct memory ({@code max} bytes, {@code used} of
     * them already) with {@link #DIRECT_HEADROOM} left for the connections' buffers and the control plane's (Netty's);
     * null if it fits or the limit is unknown ({@code max <= 0}). Without this check a pool that took the last of it
     * let the server start and then fail in Netty ("Cannot create Epoll EventLoopGroup") or in a session.
     */
    static String poolTooLarge(long bytes, long max, long used) {
        if (max <= 0 || bytes + used + DIRECT_HEADROOM <= max) {
            return null;
        }
        return "the memory pool of " + Units.formatSize(bytes) + " (--memory) leaves "
                + Units.formatSize(Math.max(0, max - used - bytes)) + " of the JVM's " + Units.formatSize(max)
                + " of direct memory for the connections and the control plane, which need "
                + Units.formatSize(DIRECT_HEADROOM) + "; give the JVM more direct memory"
                + " (JAVA_OPTS=-XX:MaxDirectMemorySize=...) or a smaller --memory";
    }

    /** The JVM's limit on direct memory in bytes (-XX:MaxDirectMemorySize, else the heap's maximum); -1 if unknown. */
    static long maxDirectMemory() {
        try {
            long set = Long.parseLong(ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                    .getVMOption("MaxDirectMemorySize").getValue());
            return set > 0 ? set : Runtime.getRuntime().maxMemory();
        } catch (RuntimeException | LinkageError e) {
            return -1; // not a HotSpot JVM: the allocation itself says when it does not fit
        }
    }

    /** Direct memory in use now, in bytes. */
    private static long directMemoryUsed() {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        return 0;
    }

    /**
     * The endpoint to serve: with event loops, readTimeout {@link #LOOP_WRITE_TIMEOUT} unless set. On rdma://, maxRegistered raised to hold the pool, which is registered there, and,
     * unless set, busyPoll shortened to {@link #SESSION_SPIN}: each session's thread waits for its client's next
     * request on the one worker all sessions share, and many threads spinning the transport's 50us each on a few
     * cores leave the threads with work descheduled (see README.md, benchmarks).
     */
    static Endpoint dataEndpoint(KvServerConfig config) {
        Endpoint e = config.dataEndpoint();
        if (config.loops() > 0 && !e.isSet(EndpointOption.READ_TIMEOUT)) {
            e = e.with(EndpointOption.READ_TIMEOUT, LOOP_WRITE_TIMEOUT);
        }
        if (!e.scheme().equals("rdma")) {
            return e;
        }
        if (!e.isSet(EndpointOption.BUSY_POLL)) {
            e = e.with(EndpointOption.BUSY_POLL, SESSION_SPIN);
        }
        long needed = config.memoryBytes() + REGISTRATION_HEADROOM;
        if (!e.isSet(EndpointOption.MAX_REGISTERED)) {
            return e.with(EndpointOption.MAX_REGISTERED, Long.toString(needed));
        }
        if (e.size(EndpointOption.MAX_REGISTERED) < needed) {
            throw new IllegalArgumentException("data endpoint " + e + ": maxRegistered must hold the memory pool"
                    + " (" + Units.formatSize(config.memoryBytes()) + ") and the connection's rings: at least "
                    + Units.formatSize(needed) + "; leave it unset to get that");
        }
        return e;
    }

    /** What clients are told: scheme, host, bound port, and the provider on rdma://. */
    private static Endpoint advertise(Endpoint bound) {
        if (bound.scheme().equals("local")) {
            return Endpoint.parse("local://" + bound.authority());
        }
        Endpoint e = Endpoint.parse(bound.scheme() + "://" + bound.authority());
        return bound.isSet(EndpointOption.PROVIDER) ? e.with(EndpointOption.PROVIDER,
                bound.string(EndpointOption.PROVIDER)) : e;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    private static void join(Thread t, long deadline) throws InterruptedException {
        long left = deadline - System.nanoTime();
        if (left > 0 && t != Thread.currentThread()) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
    }

    private static void quietly(Communicator c) {
        try {
            c.close();
        } catch (IOException e) {
            LOG.debug("closing {}", c.endpoint(), e);
        }
    }
}
