package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;

/**
 * Per-test plumbing of the kits: opens communicators and closes every one of them afterwards (so a failed
 * assertion leaks nothing into the next test), runs helper threads, and waits with deadlines.
 */
final class Harness implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(20);
    private static final long STABLY_BLOCKED_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    final TransportUnderTest transport;
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();
    private final AtomicInteger threads = new AtomicInteger();
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "kit-worker-" + threads.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    Harness(TransportUnderTest transport) {
        this.transport = transport;
    }

    /** Skips the test if the transport cannot run here, or fails it on CI. */
    void assumeAvailable() {
        Optional<String> reason = transport.skipReason();
        if (reason.isPresent()) {
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(transport + " cannot be tested, and CI=true forbids skipping: " + reason.get());
            }
            Assumptions.abort(transport + " cannot be tested here: " + reason.get());
        }
    }

    synchronized <T extends AutoCloseable> T track(T resource) {
        resources.push(resource);
        return resource;
    }

    /** A serving communicator on a fresh endpoint, with {@code extra} options as option/value pairs. */
    Communicator serve(Object... extra) throws IOException {
        Endpoint e = with(transport.serverEndpoint(), extra);
        Communicator c = track(transport.open(e));
        c.serve();
        return c;
    }

    /** A connected client of {@code served}, with {@code extra} options as option/value pairs. */
    Communicator connect(Endpoint served, Object... extra) throws IOException {
        Communicator c = track(transport.open(with(transport.withOptions(served), extra)));
        c.connect();
        return c;
    }

    /** A client opened but not connected. */
    Communicator openClient(Endpoint served, Object... extra) throws IOException {
        return track(transport.open(with(transport.withOptions(served), extra)));
    }

    static Endpoint with(Endpoint e, Object... extra) {
        Endpoint r = e;
        for (int i = 0; i < extra.length; i += 2) {
            r = r.with((EndpointOption) extra[i], (String) extra[i + 1]);
        }
        return r;
    }

    /** A server, a client connected to it, and the server's side of that connection. */
    record Pair(Communicator server, Communicator client, Communicator accepted) {
    }

    Pair pair(Object... clientOptions) throws Exception {
        Communicator server = serve();
        return pair(server, clientOptions);
    }

    Pair pair(Communicator server, Object... clientOptions) throws Exception {
        Future<Communicator> accepted = async(() -> track(server.accept()));
        Communicator client = connect(server.endpoint(), clientOptions);
        return new Pair(server, client, await(accepted));
    }

    /**
     * As {@link #pair(Communicator, Object...)} for a server with a short {@code acceptTimeout}: the server's
     * accept is retried after each timeout, as an application would, until {@link #WAIT} ends, so a client whose
     * connect takes longer than one accept window (a cold UCX context on a loaded machine) still gets in.
     */
    Pair pairRetryingAccept(Communicator server) throws Exception {
        long end = System.nanoTime() + WAIT.toNanos();
        Future<Communicator> accepted = async(() -> {
            while (true) {
                try {
                    return track(server.accept());
                } catch (SocketTimeoutException e) {
                    if (System.nanoTime() - end > 0) {
                        throw e;
                    }
                }
            }
        });
        Communicator client = connect(server.endpoint());
        return new Pair(server, client, await(accepted));
    }

    <T> Future<T> async(Callable<T> task) {
        return pool.submit(task);
    }

    /** The task's result within {@link #WAIT}; its exception rethrown as is when it is an exception. */
    static <T> T await(Future<T> f) throws Exception {
        return await(f, WAIT);
    }

    static <T> T await(Future<T> f, Duration limit) throws Exception {
        try {
            return f.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new AssertionError("task did not finish within " + limit, e);
        }
    }

    /** The exception the task ended with, failing if it returned normally or took longer than {@code limit}. */
    static Throwable failureOf(Future<?> f, Duration limit) throws InterruptedException {
        try {
            Object result = f.get(limit.toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError("expected the task to fail, it returned " + result);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new AssertionError("task still blocked " + limit + " later", e);
        }
    }

    /**
     * Waits until {@code t} is blocked (parked, waiting on a monitor, or inside a native call such as a socket
     * read) somewhere inside a method named {@code call}, so a concurrent close really races with a blocked
     * call, not with one not yet begun.
     */
    static void awaitBlocked(Thread t, String call, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        StackTraceElement blockedAt = null;
        long blockedSince = 0;
        int samples = 0;
        while (System.nanoTime() < deadline) {
            Thread.State s = t.getState();
            StackTraceElement[] stack = t.getStackTrace();
            boolean waiting = s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING
                    || s == Thread.State.BLOCKED
                    || (s == Thread.State.RUNNABLE && stack.length > 0 && stack[0].isNativeMethod());
            if (waiting && Arrays.stream(stack).anyMatch(f -> f.getMethodName().equals(call))) {
                // A passing native call or lock hand-off looks blocked for an instant; a blocked call stays.
                if (stack[0].equals(blockedAt)) {
                    samples++;
                    if (samples >= 3 && System.nanoTime() - blockedSince >= STABLY_BLOCKED_NANOS) {
                        return;
                    }
                } else {
                    blockedAt = stack[0];
                    blockedSince = System.nanoTime();
                    samples = 1;
                }
            } else {
                blockedAt = null;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        fail(t.getName() + " never blocked in " + call + "() within " + limit + "; state " + t.getState() + " at "
                + Arrays.stream(t.getStackTrace()).limit(8).map(String::valueOf).collect(Collectors.joining(" <- ")));
    }

    /** Fails, naming the offenders, if a thread with the transport's prefix is still alive after {@code limit}. */
    static void assertNoThreads(String prefix, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        List<Thread> alive;
        do {
            alive = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).collect(Collectors.toList());
            if (alive.isEmpty()) {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        } while (System.nanoTime() < deadline);
        fail(alive.size() + " thread(s) named " + prefix + "* still alive " + limit + " after everything was"
                + " closed: " + alive.stream().map(t -> t.getName() + " (" + t.getState() + " at "
                        + Arrays.stream(t.getStackTrace()).limit(4).map(String::valueOf)
                                .collect(Collectors.joining(" <- ")) + ")")
                        .collect(Collectors.joining("; ")));
    }

    // ---- data -------------------------------------------------------------------------------------------------

    static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static ByteBuffer direct(byte[] content) {
        return ByteBuffer.allocateDirect(content.length).put(content).flip();
    }

    /** Writes {@code data} in chunks of {@code chunk} bytes, then syncs. */
    static void writeAll(Communicator c, byte[] data, int chunk) throws IOException {
        for (int off = 0; off < data.length; off += chunk) {
            ByteBuffer b = ByteBuffer.wrap(data, off, Math.min(chunk, data.length - off));
            c.write(b);
            assertEquals(0, b.remaining(), "write() must take every byte");
        }
        c.sync();
    }

    static byte[] readN(Communicator c, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        c.readFully(b);
        return b.array();
    }

    static void assertBytes(byte[] expected, byte[] actual, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        int mismatch = Arrays.mismatch(expected, actual);
        assertTrue(mismatch < 0, () -> what + ": first difference at byte " + mismatch + " of " + expected.length);
    }

    static void assertUsable(Pair p) throws Exception {
        exchange(p.client(), p.accepted(), 7);
        exchange(p.accepted(), p.client(), 11);
    }

    static void exchange(Communicator from, Communicator to, long seed) throws Exception {
        byte[] msg = random(seed, 1000);
        writeAll(from, msg, msg.length);
        assertBytes(msg, readN(to, msg.length), "message from " + from.peerName() + "'s peer");
    }

    /** Closes every tracked resource (newest first) and stops the helper threads. */
    @Override
    public void close() throws Exception {
        Exception first = null;
        while (true) {
            AutoCloseable r;
            synchronized (this) {
                r = resources.poll();
            }
            if (r == null) {
                break;
            }
            try {
                r.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        pool.shutdownNow();
        if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
            throw new AssertionError("kit helper threads still running 10 s after every communicator was closed:"
                    + " a blocked call was not released by close()");
        }
        if (first != null) {
            throw first;
        }
    }
}
