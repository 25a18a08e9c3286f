package io.rdmacomm.gvirtus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.testkit.LogCapture;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The backend's life cycle, limits and routine registry, over {@code local://}. */
@Timeout(30)
class GVirtuSBackendTest {
    private static final AtomicInteger NAMES = new AtomicInteger();
    private LogCapture log;

    @BeforeEach
    void captureLog() {
        log = new LogCapture();
    }

    @AfterEach
    void restoreLog() {
        log.close();
    }

    private static Communicator server() throws IOException {
        return Communicators.serve("local://gvirtus-backend-" + NAMES.incrementAndGet());
    }

    private static GVirtuSFrontend frontend(GVirtuSBackend b) throws IOException {
        return GVirtuSFrontend.connect(b.endpoint().toString());
    }

    private static Set<Thread> backendThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gvirtus-") && t.isAlive()).collect(Collectors.toSet());
    }

    @Test
    void aConnectionBeyondMaxSessionsIsClosedWithAWarning() throws Exception {
        try (GVirtuSBackend b = GVirtuSBackend.builder().registerAll(BuiltinRoutines.all()).maxSessions(1)
                .start(server())) {
            try (GVirtuSFrontend first = frontend(b)) {
                assertEquals(42, first.execute("fail", new byte[0]).exitCode());
                try (GVirtuSFrontend second = frontend(b)) {
                    assertThrows(IOException.class, () -> second.execute("fail", new byte[0]));
                }
                log.await("refusing", "1 sessions running (maxSessions)");
            }
            while (b.activeSessions() > 0) {
                Thread.onSpinWait(); // the first session ends once its thread sees the connection closed
            }
            try (GVirtuSFrontend third = frontend(b)) {
                assertEquals(42, third.execute("fail", new byte[0]).exitCode());
            }
        }
    }

    @Test
    void closeEndsSessionsInterruptsRoutinesAndLeavesNoThread() throws Exception {
        Set<Thread> before = backendThreads();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        GVirtuSBackend b = GVirtuSBackend.builder().registerAll(BuiltinRoutines.all())
                .register(TestRoutines.block(entered, never)).start(server());
        GVirtuSFrontend idle = frontend(b);
        GVirtuSFrontend sleeping = frontend(b);
        GVirtuSFrontend blocked = frontend(b);
        assertEquals(0, idle.execute("echo", GVirtuSBuffer.create().addNullPointer()).exitCode());
        CompletableFuture<GVirtuSResult> blockedCall = CompletableFuture.supplyAsync(() -> call(blocked, "block", 0));
        CompletableFuture<GVirtuSResult> sleepingCall = CompletableFuture.supplyAsync(() -> call(sleeping, "sleep",
                60_000));
        entered.await();
        while (b.activeSessions() < 3) {
            Thread.onSpinWait();
        }
        long start = System.nanoTime();
        b.close();
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(5).toNanos(), "close took too long");
        assertEquals(0, b.activeSessions());
        ExecutionException e = assertThrows(ExecutionException.class, blockedCall::get);
        assertTrue(e.getCause().getCause() instanceof IOException, e.toString());
        assertThrows(ExecutionException.class, sleepingCall::get);
        assertThrows(IOException.class, () -> idle.execute("echo", new byte[8]));
        Set<Thread> left = backendThreads();
        left.removeAll(before);
        assertEquals(Set.of(), left);
        idle.close();
        sleeping.close();
        blocked.close();
    }

    @Test
    void closeWaitsNoLongerThanItsTimeoutForARoutineThatIgnoresInterrupts() throws Exception {
        AtomicBoolean release = new AtomicBoolean();
        CountDownLatch entered = new CountDownLatch(1);
        GVirtuSRoutine stubborn = TestRoutines.of("stubborn", (in, ctx) -> {
            entered.countDown();
            while (!release.get()) {
                Thread.onSpinWait();
            }
            return GVirtuSResult.ok(new byte[0]);
        });
        GVirtuSBackend b = GVirtuSBackend.builder().register(stubborn).closeTimeout(Duration.ofMillis(200))
                .start(server());
        try (GVirtuSFrontend f = frontend(b)) {
            CompletableFuture<GVirtuSResult> call = CompletableFuture.supplyAsync(() -> call(f, "stubborn", 0));
            entered.await();
            b.close();
            log.await("still running after close; a routine ignores interruption");
            release.set(true);
            assertThrows(ExecutionException.class, call::get); // its reply cannot go out on a closed connection
        }
    }

    @Test
    void routinesListedForServiceLoaderAreDiscovered() throws Exception {
        try (GVirtuSBackend b = GVirtuSBackend.builder().discover().start(server())) {
            assertTrue(b.routines().contains(DiscoveredRoutine.NAME), b.routines().toString());
            try (GVirtuSFrontend f1 = frontend(b); GVirtuSFrontend f2 = frontend(b)) {
                long id1 = f1.execute(DiscoveredRoutine.NAME, new byte[0]).outputBuffer().getLong();
                long id2 = f2.execute(DiscoveredRoutine.NAME, new byte[0]).outputBuffer().getLong();
                assertNotEquals(id1, id2);
            }
        }
    }

    @Test
    void builtinsAreNotRegisteredUnlessAskedFor() throws Exception {
        try (GVirtuSBackend b = GVirtuSBackend.builder().discover().start(server()); GVirtuSFrontend f = frontend(b)) {
            assertEquals(GVirtuSResult.EXIT_UNKNOWN_ROUTINE, f.execute("echo", new byte[8]).exitCode());
        }
    }

    @Test
    void badRegistrationsAreRefusedWithTheReason() throws Exception {
        GVirtuSBackend.Builder builder = GVirtuSBackend.builder().register(BuiltinRoutines.echo());
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
                () -> builder.register(BuiltinRoutines.echo()));
        assertTrue(dup.getMessage().startsWith("two routines named 'echo'"), dup.getMessage());
        assertThrows(IllegalArgumentException.class, () -> builder.register(TestRoutines.of("", null)));
        assertThrows(IllegalArgumentException.class, () -> builder.register(TestRoutines.of("a\0b", null)));
        assertThrows(IllegalArgumentException.class, () -> builder.maxSessions(0));

        GVirtuSBackend.Builder tight = GVirtuSBackend.builder().register(BuiltinRoutines.cudaGetDeviceCount())
                .limits(GVirtuSLimits.DEFAULT.withMaxRoutineNameBytes(8));
        try (Communicator s = server()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> tight.start(s));
            assertTrue(e.getMessage().contains("'cudaGetDeviceCount' is longer than maxRoutineNameBytes 8"),
                    e.getMessage());
        }
    }

    @Test
    void sessionAttributesBelongToOneSession() throws Exception {
        try (GVirtuSBackend b = GVirtuSBackend.builder().register(TestRoutines.counter()).start(server());
                GVirtuSFrontend f1 = frontend(b); GVirtuSFrontend f2 = frontend(b)) {
            assertEquals(1, f1.execute("count", new byte[0]).outputBuffer().getInt());
            assertEquals(2, f1.execute("count", new byte[0]).outputBuffer().getInt());
            assertEquals(1, f2.execute("count", new byte[0]).outputBuffer().getInt());
        }
    }

    @Test
    void aRoutineReturningNothingIsAnErrorExit() throws Exception {
        try (GVirtuSBackend b = GVirtuSBackend.builder().register(TestRoutines.of("nothing", (in, ctx) -> null))
                .start(server()); GVirtuSFrontend f = frontend(b)) {
            assertEquals(GVirtuSResult.EXIT_ROUTINE_FAILED, f.execute("nothing", new byte[0]).exitCode());
            log.await("routine 'nothing' returned no result");
        }
    }

    @Test
    void anAcceptTimeoutOnTheEndpointDoesNotStopTheBackend() throws Exception {
        // accept() times out every 1 ms, many times over before the test has looked up the transport and connected
        Communicator s = Communicators.serve("local://gvirtus-backend-" + NAMES.incrementAndGet()
                + "?acceptTimeout=1ms");
        try (GVirtuSBackend b = GVirtuSBackend.builder().register(BuiltinRoutines.fail()).start(s)) {
            try (GVirtuSFrontend f = frontend(b)) {
                assertEquals(42, f.execute("fail", new byte[0]).exitCode());
            }
        }
    }

    private static GVirtuSResult call(GVirtuSFrontend f, String routine, int arg) {
        try {
            return f.execute(routine, GVirtuSBuffer.create().addInt(arg));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
