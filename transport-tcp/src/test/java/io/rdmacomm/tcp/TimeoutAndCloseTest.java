package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Timeouts and close on both channel modes (blocking; non-blocking, parked until the readiness selector wakes it). */
class TimeoutAndCloseTest {
    private final ExecutorService helper = Executors.newCachedThreadPool();

    @AfterEach
    void stopHelper() throws InterruptedException {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    private record Pair(Communicator server, Communicator client, Communicator accepted) implements AutoCloseable {
        @Override
        public void close() throws java.io.IOException {
            client.close();
            accepted.close();
            server.close();
        }
    }

    private Pair pair(String serverOptions, String clientOptions) throws Exception {
        Communicator server = Communicators.serve("tcp://127.0.0.1:0" + serverOptions);
        Future<Communicator> accepted = helper.submit(server::accept);
        Communicator client = Communicators.connect("tcp://127.0.0.1:" + server.endpoint().port() + clientOptions);
        return new Pair(server, client, accepted.get(10, TimeUnit.SECONDS));
    }

    private static void assertTookAbout(long startNanos, long millis) {
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        assertTrue(took >= millis - 50 && took < millis + 5000, "took " + took + " ms, expected about " + millis);
    }

    @Test
    @Timeout(20)
    void readTimeoutWithBusyPollingSpinsThenTimesOutAndTheConnectionStaysUsable() throws Exception {
        try (Pair p = pair("", "?readTimeout=300ms&busyPoll=1ms")) {
            long start = System.nanoTime();
            SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
                    () -> p.client().read(ByteBuffer.allocate(8)));
            assertTookAbout(start, 300);
            assertTrue(e.getMessage().contains(p.client().peerName()), e.getMessage());
            p.accepted().write(ByteBuffer.wrap(new byte[] {42}));
            p.accepted().sync();
            ByteBuffer one = ByteBuffer.allocate(1);
            assertEquals(1, p.client().read(one));
            assertEquals(42, one.get(0));
        }
    }

    @Test
    @Timeout(30)
    void aWriteThePeerNeverConsumesTimesOutAfterTheReadTimeout() throws Exception {
        try (Pair p = pair("", "?readTimeout=500ms")) {
            ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
            SocketTimeoutException e = assertThrows(SocketTimeoutException.class, () -> {
                for (int i = 0; i < 10_000; i++) {
                    p.client().write(chunk.clear());
                }
            });
            assertTrue(e.getMessage().contains("write to " + p.client().peerName()), e.getMessage());
        }
    }

    @Test
    @Timeout(20)
    void connectToAClosedPortIsAConnectExceptionNamingTheEndpoint() throws Exception {
        int port;
        try (Communicator s = Communicators.serve("tcp://127.0.0.1:0")) {
            port = s.endpoint().port();
        }
        ConnectException e = assertThrows(ConnectException.class,
                () -> Communicators.connect("tcp://127.0.0.1:" + port));
        assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
    }

    @Test
    @Timeout(20)
    @EnabledOnOs(OS.LINUX) // Linux drops a SYN to a full listen queue; Windows refuses it
    void aConnectTheServerNeverTakesTimesOutAtConnectTimeoutAndCloseAbortsOne() throws Exception {
        // a listener with a backlog of 1 that never accepts: once its queue is full, the kernel drops further SYNs
        // and a connect waits in the kernel until its deadline closes the socket
        try (ServerSocketChannel full = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0), 1)) {
            int port = ((InetSocketAddress) full.getLocalAddress()).getPort();
            java.util.List<SocketChannel> fillers = new java.util.ArrayList<>();
            try {
                for (int i = 0; i < 8; i++) {
                    SocketChannel f = SocketChannel.open();
                    f.configureBlocking(false);
                    f.connect(new InetSocketAddress("127.0.0.1", port));
                    fillers.add(f);
                }
                String uri = "tcp://127.0.0.1:" + port;
                long start = System.nanoTime();
                SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
                        () -> Communicators.connect(uri + "?connectTimeout=700ms"));
                assertTookAbout(start, 700);
                assertTrue(e.getMessage().contains("(connectTimeout) connecting to " + uri), e.getMessage());
                assertEquals(0, threadsNamed("rdmacomm-tcp-dial-deadlines", 3),
                        "the deadline thread ends once no dial is watched");

                Communicator aborted = Communicators.open(uri + "?connectTimeout=60s");
                Future<?> connecting = helper.submit(() -> {
                    aborted.connect();
                    return null;
                });
                awaitConnectingInTheKernel(connecting);
                aborted.close();
                ExecutionException ee = assertThrows(ExecutionException.class,
                        () -> connecting.get(10, TimeUnit.SECONDS));
                assertInstanceOf(AsynchronousCloseException.class, ee.getCause());
            } finally {
                for (SocketChannel f : fillers) {
                    f.close();
                }
            }
        }
    }

    /** Waits until a thread is in the kernel's connect, called from {@link Dialer}. */
    private static void awaitConnectingInTheKernel(Future<?> task) {
        awaitStack(task, f -> f.getClassName().equals(Dialer.class.getName()),
                f -> f.isNativeMethod() && f.getMethodName().startsWith("connect"), "the kernel's connect from Dialer");
    }

    /** Waits up to {@code seconds} for the threads whose names start with {@code prefix} to end; how many are left. */
    private static long threadsNamed(String prefix, int seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (threads(prefix) > 0 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return threads(prefix);
    }

    @Test
    @Timeout(20)
    void closeUnblocksAReadParkedUntilTheReadinessSelectorWakesIt() throws Exception {
        try (Pair p = pair("", "?readTimeout=30s")) {
            Future<Integer> read = helper.submit(() -> p.client().read(ByteBuffer.allocate(8)));
            awaitParkedIn(read, "park");
            p.client().close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
            assertInstanceOf(AsynchronousCloseException.class, e.getCause());
            assertThrows(ClosedChannelException.class, () -> p.client().read(ByteBuffer.allocate(8)));
            assertEquals(-1, p.accepted().read(ByteBuffer.allocate(8)), "the peer sees a clean end of stream");
        }
    }

    /** Polls (with a deadline) until some helper thread's stack shows it waiting in {@code method}. */
    private static void awaitParkedIn(Future<?> task, String method) {
        awaitStack(task, f -> f.getClassName().equals(TcpConnection.class.getName()),
                f -> f.getMethodName().contains(method), method + " inside TcpConnection");
    }

    /** Polls (with a deadline) until a thread's stack has an {@code ours} frame and a {@code waiting} one. */
    private static void awaitStack(Future<?> task, Predicate<StackTraceElement> ours,
            Predicate<StackTraceElement> waiting, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline && !task.isDone()) {
            for (StackTraceElement[] stack : Thread.getAllStackTraces().values()) {
                boolean isOurs = false;
                boolean isWaiting = false;
                for (StackTraceElement f : stack) {
                    isWaiting |= waiting.test(f);
                    isOurs |= ours.test(f);
                }
                if (isOurs && isWaiting) {
                    return;
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        throw new AssertionError("no thread ever waited in " + what);
    }

    @Test
    @Timeout(20)
    void serveOnPortZeroReportsTheBoundPortAndPeerNamesAreAddresses() throws Exception {
        try (Pair p = pair("", "")) {
            assertTrue(p.server().endpoint().port() > 0);
            assertTrue(p.client().peerName().equals("127.0.0.1:" + p.server().endpoint().port()),
                    p.client().peerName());
            assertTrue(p.accepted().peerName().matches("127\\.0\\.0\\.1:\\d+"), p.accepted().peerName());
        }
    }

    @Test
    @Timeout(20)
    void noTransportThreadRemainsAfterClose() throws Exception {
        Pair p = pair("", "?busyPoll=10us");
        p.client().register(ByteBuffer.allocateDirect(64), io.rdmacomm.api.Access.readWrite());
        assertTrue(threads("rdmacomm-tcp-") > 0);
        p.close();
        assertEquals(0, threadsNamed("rdmacomm-tcp-", 5), "threads named rdmacomm-tcp-* alive after close");
    }

    static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().startsWith(prefix))
                .count();
    }
}
