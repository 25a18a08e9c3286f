package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.verify;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.Payloads;
import io.rdmacomm.collectives.PeerGroup;
import io.rdmacomm.session.routine.RoutineRegistry;
import io.rdmacomm.session.routine.StallRoutine;
import io.rdmacomm.testkit.LogCapture;
import io.rdmacomm.testkit.ScriptedPeer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mockito.ArgumentCaptor;

/** The limits that keep hostile or idle clients from exhausting a server (issue 12: "cheap exhaustion"). */
@Timeout(60)
class SessionLimitsTest {
    private static final RegionDescriptor OUTPUT = new RegionDescriptor(1, 64, EnumSet.of(Access.REMOTE_WRITE),
            new byte[] {1});
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private SessionServer server;
    private Future<?> running;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.stop();
            running.get(10, TimeUnit.SECONDS);
        }
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    private static ExchangeSettings settings(RoutineRegistry routines, int maxCallInput, Duration routineTimeout,
            Duration idleTimeout) {
        return new ExchangeSettings(1024, PeerGroup.DEFAULT_MAX_PEERS, Duration.ofSeconds(30), routines,
                maxCallInput, routineTimeout, idleTimeout);
    }

    private static byte[] callHeader(String routine, int declared) {
        byte[] d = OUTPUT.toBytes();
        return ScriptedPeer.concat(SessionRequest.call(routine, declared).encode(),
                ByteBuffer.allocate(2).putShort((short) d.length).flip(), ByteBuffer.wrap(d));
    }

    @Test
    void aCallHoldsOnlyTheInputThatArrivedNotWhatItDeclared() throws IOException {
        SessionDispatcher dispatcher = SessionDispatcher.standard(ExchangeSettings.defaults(), Duration.ZERO, null);
        byte[] script = ScriptedPeer.concat(ByteBuffer.wrap(callHeader("echo", SessionProtocol.MAX_CALL_INPUT)),
                ByteBuffer.wrap(new byte[10]));
        ScriptedPeer peer = new ScriptedPeer(script, Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ExchangeResult r = Wire.result(skipReply(peer.written()));
        assertEquals(SessionStatus.TRUNCATED, r.status());
        assertTrue(r.message().contains("10 of " + SessionProtocol.MAX_CALL_INPUT), r.message());
        ArgumentCaptor<ByteBuffer> reads = ArgumentCaptor.forClass(ByteBuffer.class);
        verify(peer.communicator(), atLeastOnce()).read(reads.capture());
        for (ByteBuffer b : reads.getAllValues()) {
            assertTrue(b.capacity() <= Payloads.FIRST_CHUNK, "a read into " + b.capacity() + " bytes");
        }
    }

    @Test
    void aDeclaredInputAboveTheServersLimitIsRefusedUnread() throws IOException {
        SessionDispatcher dispatcher = SessionDispatcher.standard(settings(RoutineRegistry.builtins(), 1000,
                Duration.ofSeconds(5), Duration.ZERO), Duration.ZERO, null);
        ScriptedPeer peer = new ScriptedPeer(callHeader("echo", 1001), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        SessionReply reply = Wire.reply(peer.written());
        assertEquals(SessionStatus.REQUEST_TOO_LARGE, reply.status());
        assertTrue(reply.message().contains("1001") && reply.message().contains("maxCallInput"), reply.message());
    }

    @Test
    void aRoutineThatOverrunsItsTimeIsInterruptedAndTheCallFails() throws Exception {
        StallRoutine.interrupted = new CountDownLatch(1);
        SessionDispatcher dispatcher = SessionDispatcher.standard(settings(
                RoutineRegistry.load(getClass().getClassLoader()), 1000, Duration.ofMillis(200), Duration.ZERO),
                Duration.ZERO, null);
        ScriptedPeer peer = new ScriptedPeer(callHeader("stall", 0), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ExchangeResult r = Wire.result(skipReply(peer.written()));
        assertEquals(SessionStatus.OK, r.status());
        assertEquals(CallHandler.EXIT_FAILED, r.body().getInt(0));
        assertTrue(r.message().contains("did not finish within 200 ms"), r.message());
        assertTrue(StallRoutine.interrupted.await(10, TimeUnit.SECONDS), "the routine's thread was interrupted");
    }

    @Test
    void sumRefusesIntegersTooLongToParseInLinearTime() throws Exception {
        SessionDispatcher dispatcher = SessionDispatcher.standard(ExchangeSettings.defaults(), Duration.ZERO, null);
        byte[] input = ("1 " + "9".repeat(1001)).getBytes(StandardCharsets.US_ASCII);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(ByteBuffer.wrap(callHeader("sum", input.length)),
                ByteBuffer.wrap(input)), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ExchangeResult r = Wire.result(skipReply(peer.written()));
        assertEquals(SessionStatus.OK, r.status(), r.message());
        assertEquals(CallHandler.EXIT_REFUSED, r.body().getInt(0));
        assertTrue(r.message().contains("at most 1000 digits"), r.message());
    }

    @Test
    void idleSessionsAreClosedSoTheyCannotKeepLaterClientsBusy() throws Exception {
        server = SessionServer.start(Endpoint.parse("local://limits-" + UUID.randomUUID()), 2, Duration.ofSeconds(5),
                settings(RoutineRegistry.builtins(), 1000, Duration.ofSeconds(5), Duration.ofMillis(300)));
        running = pool.submit(() -> {
            server.run();
            return null;
        });
        List<Communicator> idle = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Communicator c = Communicators.connect(server.endpoint().toString());
            SessionClient.open(c, SessionRequest.echo());
            idle.add(c);
        }
        for (Communicator c : idle) {
            assertEquals(-1, c.read(ByteBuffer.allocate(1)), "the server closed the idle session");
            c.close();
        }
        // the idle sessions' permits come back once their threads end: a later client gets in
        while (true) {
            try (Communicator c = Communicators.connect(server.endpoint().toString())) {
                SessionClient.open(c, SessionRequest.echo());
                c.write(ByteBuffer.wrap(new byte[] {42}));
                c.sync();
                ByteBuffer got = ByteBuffer.allocate(1);
                c.readFully(got);
                assertEquals(42, got.get(0));
                return;
            } catch (SessionException e) {
                assertEquals(SessionStatus.BUSY, e.status(), e.getMessage());
                Thread.onSpinWait();
            }
        }
    }

    @Test
    void aFailedSessionsSlotIsFreeWhenItsFailureIsLogged() throws Exception {
        server = SessionServer.start(Endpoint.parse("local://limits-" + UUID.randomUUID()), 1, Duration.ofSeconds(5),
                settings(RoutineRegistry.builtins(), 1000, Duration.ofSeconds(5), Duration.ofMillis(200)));
        // the live sessions and the free slots at the moment the idle session's failure is written
        CompletableFuture<List<Integer>> atFailureLine = new CompletableFuture<>();
        try (LogCapture log = new LogCapture(line -> {
            if (line.contains("failed") && line.contains("idle timeout")) {
                atFailureLine.complete(List.of(server.liveSessions(), server.freeSlots()));
            }
        })) {
            running = pool.submit(() -> {
                server.run();
                return null;
            });
            try (Communicator c = Communicators.connect(server.endpoint().toString())) {
                SessionClient.open(c, SessionRequest.echo());
                assertEquals(List.of(0, 1), atFailureLine.get(20, TimeUnit.SECONDS),
                        "[live sessions, free slots] as the line said the session ended");
            }
        }
    }

    private static ByteBuffer skipReply(ByteBuffer out) throws IOException {
        SessionReply reply = Wire.reply(out);
        assertEquals(SessionStatus.OK, reply.status(), reply.message());
        return out;
    }
}
