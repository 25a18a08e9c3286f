package io.rdmacomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.clientcomm.bench.AllocationMeter;
import io.rdmacomm.clientcomm.bench.Messages;
import io.rdmacomm.clientcomm.bench.Progress;
import io.rdmacomm.clientcomm.bench.Runs;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The raw JUCX baseline over real UCX in this JVM: a server thread with its own context and worker, clients on
 * the test thread with theirs. Skipped where libucx cannot be loaded.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RawUcxBaselineTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private volatile RawUcxServer server;
    private Thread serverThread;
    private InetSocketAddress address;

    @BeforeEach
    void start() throws Exception {
        CompletableFuture<InetSocketAddress> bound = new CompletableFuture<>();
        PrintStream out = new PrintStream(log, true, StandardCharsets.UTF_8);
        // the worker belongs to the thread that listens, serves and closes
        serverThread = new Thread(() -> {
            RawUcxServer s;
            try {
                s = RawUcxServer.listen(new InetSocketAddress("127.0.0.1", 0), out);
            } catch (Exception | LinkageError e) {
                bound.completeExceptionally(e);
                return;
            }
            server = s;
            bound.complete(s.address());
            try {
                s.run();
            } catch (IOException e) {
                out.println("run failed: " + e);
            }
        }, "rdmacomm-bench-test-raw-ucx-server");
        serverThread.start();
        try {
            address = bound.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            String m = String.valueOf(e.getCause().getMessage());
            assumeTrue(!m.contains("libucx is not installed") && !m.contains("not on the class path"), m);
            throw e;
        }
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.stop();
        }
        serverThread.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(serverThread.isAlive(), "the raw UCX server thread outlived stop()");
    }

    @Test
    void echoRecordsEveryRoundTripAndComesBackWhole() throws Exception {
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_ECHO, 64, 0, TIMEOUT)) {
            RawUcxClient.Echo rt = client.roundTrip(64);
            rt.roundTrip();
            assertTrue(rt.lastEchoMatches());
            Histogram h = Runs.newHistogram();
            Runs.latency(rt, 100, 1000, h, Progress.silent(), AllocationMeter.create());
            assertEquals(1000, h.getTotalCount());
            assertTrue(h.getValueAtPercentile(50) > 0);
        }
    }

    @Test
    void largeEchoesComeBackWhole() throws Exception {
        int size = 1 << 20;
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_ECHO, size, 0, TIMEOUT)) {
            RawUcxClient.Echo rt = client.roundTrip(size);
            for (int i = 0; i < 5; i++) {
                rt.roundTrip();
                assertTrue(rt.lastEchoMatches());
            }
        }
    }

    @Test
    void theSinkAcknowledgesEveryByteAndTheNextClientIsServed() throws Exception {
        long total = (10L << 20) + 3;
        for (int run = 0; run < 2; run++) {
            try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_SINK, (64 << 10) + 3, total,
                    TIMEOUT)) {
                // Runs.bandwidth fails unless the acknowledgement holds exactly the total
                assertTrue(Runs.bandwidth(client.sender(), Messages.pattern((64 << 10) + 3), total,
                        Progress.silent()) > 0);
            }
        }
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_ECHO, 8, 0, TIMEOUT)) {
            client.roundTrip(8).roundTrip();
        }
        assertEquals("", log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aRunTheServerCannotServeIsRefusedAndTheServerGoesOn() throws Exception {
        var e = assertThrows(HandshakeException.class,
                () -> RawUcxClient.connect(address, RawUcx.KIND_SINK, 8, 0, TIMEOUT));
        assertTrue(e.getMessage().contains("refused the raw UCX run"), e.getMessage());
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_ECHO, 8, 0, TIMEOUT)) {
            client.roundTrip(8).roundTrip();
        }
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("bad sink total 0 for kind 2"), log::toString);
    }

    @Test
    void aClientThatVanishesIsDroppedAndTheServerGoesOn() throws Exception {
        RawUcxClient gone = RawUcxClient.connect(address, RawUcx.KIND_ECHO, 8, 0, TIMEOUT);
        gone.roundTrip(8).roundTrip();
        gone.abandon();
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_ECHO, 8, 0, TIMEOUT)) {
            RawUcxClient.Echo rt = client.roundTrip(8);
            rt.roundTrip();
            assertTrue(rt.lastEchoMatches());
        }
    }

    @Test
    void withoutAServerTheClientSaysWhatToStart() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        var e = assertThrows(ConnectException.class, () -> RawUcxClient.connect(
                new InetSocketAddress("127.0.0.1", port), RawUcx.KIND_ECHO, 8, 0, Duration.ofSeconds(5)));
        assertTrue(e.getMessage().startsWith("cannot connect to raw UCX baseline server 127.0.0.1:" + port
                + " (start it with 'bench/baseline raw-ucx-serve')"), e.getMessage());
    }

    @Test
    void putsIntoEitherMemoryAreFlushedAndCounted() throws Exception {
        long total = (4L << 20) + 3;
        for (RawUcx.TargetMemory memory : RawUcx.TargetMemory.values()) {
            try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_PUT, 1 << 20, total, memory,
                    TIMEOUT)) {
                // Runs.bandwidth fails unless the flushes confirmed exactly the total
                assertTrue(Runs.bandwidth(client.putSender(), Messages.pattern(1 << 20), total, Progress.silent()) > 0,
                        memory::toString);
            }
        }
        assertEquals("", log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void putRoundTripsIntoAProgressingTargetAreRecorded() throws Exception {
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_PUT, 64, 64, RawUcx.TargetMemory.MAPPED,
                TIMEOUT)) {
            Histogram h = Runs.newHistogram();
            Runs.latency(client.putRoundTrip(64), 10, 100, h, Progress.silent(), AllocationMeter.create());
            assertEquals(100, h.getTotalCount());
        }
        assertEquals("", log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void idlePutsCompleteWhetherOrNotTheTargetMustProgressAndTheServerGoesOn() throws Exception {
        for (RawUcx.TargetMemory memory : RawUcx.TargetMemory.values()) {
            try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_IDLE_PUT, 8, 5, memory, TIMEOUT)) {
                Histogram h = Runs.newHistogram();
                Runs.latency(client.putRoundTrip(8), 2, 5, h, Progress.silent(), AllocationMeter.create());
                assertEquals(5, h.getTotalCount(), memory::toString);
            }
        }
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_ECHO, 8, 0, TIMEOUT)) {
            RawUcxClient.Echo rt = client.roundTrip(8);
            rt.roundTrip();
            assertTrue(rt.lastEchoMatches());
        }
        assertEquals("", log.toString(StandardCharsets.UTF_8));
    }
}
