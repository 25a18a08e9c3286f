package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.session.routine.RoutineRegistry;
import io.rdmacomm.testkit.ScriptedPeer;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The group exchanges across sessions, each member a Mockito mock served in its own thread as the server does:
 * formation, rank order, the collectives' frames, and the errors a member can get.
 */
@Timeout(20)
class GroupHandlerTest {
    private final ExecutorService sessions = Executors.newCachedThreadPool();

    @AfterEach
    void stop() throws InterruptedException {
        sessions.shutdownNow();
        assertTrue(sessions.awaitTermination(10, TimeUnit.SECONDS));
    }

    private static SessionDispatcher dispatcher(int maxGroupSize, Duration groupTimeout) {
        return SessionDispatcher.standard(new ExchangeSettings(1024, maxGroupSize, groupTimeout,
                RoutineRegistry.builtins()), Duration.ZERO, null);
    }

    private List<ScriptedPeer> serveAll(SessionDispatcher d, List<byte[]> scripts) throws Exception {
        List<ScriptedPeer> peers = new ArrayList<>();
        List<Future<?>> running = new ArrayList<>();
        for (byte[] script : scripts) {
            ScriptedPeer p = new ScriptedPeer(script, 5);
            peers.add(p);
            running.add(sessions.submit(() -> {
                d.serve(p.communicator());
                return null;
            }));
        }
        for (Future<?> f : running) {
            f.get(15, TimeUnit.SECONDS);
        }
        return peers;
    }

    @Test
    void allToAllGivesEveryMemberEveryContributionInRankOrderWithTheServerFirst() throws Exception {
        SessionDispatcher d = dispatcher(8, Duration.ofSeconds(10));
        int size = 16;
        List<byte[]> scripts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            scripts.add(ScriptedPeer.concat(SessionRequest.allToAll("g", 3, size).encode(),
                    ByteBuffer.allocate(4 + size).putInt(size).put(("member " + i).getBytes(StandardCharsets.UTF_8))
                            .position(4 + size).flip()));
        }

        List<ScriptedPeer> peers = serveAll(d, scripts);

        List<String> expectedByRank = new ArrayList<>();
        expectedByRank.add("server");
        String[] ranked = new String[3];
        List<ByteBuffer> outs = new ArrayList<>();
        for (ScriptedPeer p : peers) {
            ByteBuffer out = p.written();
            assertEquals(SessionStatus.OK, Wire.reply(out).status());
            ByteBuffer formed = Wire.result(out).body();
            int rank = formed.getShort();
            assertEquals(4, formed.getShort());
            assertEquals(0, formed.getShort());
            ranked[rank - 1] = "member " + peers.indexOf(p);
            outs.add(out);
        }
        expectedByRank.addAll(Arrays.asList(ranked));
        for (ByteBuffer out : outs) {
            assertEquals(4, out.getInt());
            assertEquals(size, out.getInt());
            List<String> got = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                byte[] c = new byte[size];
                out.get(c);
                got.add(new String(c, StandardCharsets.UTF_8).replace("\0", ""));
            }
            assertEquals(expectedByRank, got);
            assertEquals(ExchangeResult.ok(ByteBuffer.allocate(0)), Wire.result(out), "completion");
            assertEquals(0, out.remaining());
        }
    }

    @Test
    void broadcastCarriesTheMessageOfTheLowestRankedMemberThatOfferedOne() throws Exception {
        SessionDispatcher d = dispatcher(8, Duration.ofSeconds(10));
        byte[] hello = "hello everyone".getBytes(StandardCharsets.UTF_8);
        List<byte[]> scripts = List.of(
                ScriptedPeer.concat(SessionRequest.broadcast("b", 2, 0).encode()),
                ScriptedPeer.concat(SessionRequest.broadcast("b", 2, hello.length).encode(), ByteBuffer.wrap(hello)));

        List<ScriptedPeer> peers = serveAll(d, scripts);

        int offererRank = -1;
        List<Integer> sources = new ArrayList<>();
        List<String> received = new ArrayList<>();
        for (int i = 0; i < peers.size(); i++) {
            ByteBuffer out = peers.get(i).written();
            Wire.reply(out);
            ByteBuffer formed = Wire.result(out).body();
            int rank = formed.getShort();
            assertEquals(3, formed.getShort());
            sources.add((int) formed.getShort());
            if (i == 1) {
                offererRank = rank;
            }
            byte[] got = new byte[out.getInt()];
            out.get(got);
            received.add(new String(got, StandardCharsets.UTF_8));
            assertEquals(ExchangeResult.ok(ByteBuffer.allocate(0)), Wire.result(out), "completion");
            assertEquals(0, out.remaining());
        }
        assertEquals(List.of(offererRank, offererRank), sources);
        assertEquals(List.of("hello everyone", "hello everyone"), received);
    }

    @Test
    void broadcastWithoutAnOfferCarriesTheServersOwnMessageFromRank0() throws Exception {
        List<ScriptedPeer> peers = serveAll(dispatcher(8, Duration.ofSeconds(10)),
                List.of(ScriptedPeer.concat(SessionRequest.broadcast("solo", 1, 0).encode())));

        ByteBuffer out = peers.get(0).written();
        Wire.reply(out);
        ByteBuffer formed = Wire.result(out).body();
        assertEquals(1, formed.getShort());
        assertEquals(2, formed.getShort());
        assertEquals(0, formed.getShort());
        byte[] text = new byte[out.getInt()];
        out.get(text);
        assertEquals("servercomm to group 'solo' of 1 members", new String(text, StandardCharsets.UTF_8));
    }

    @Test
    void aMemberAnnouncingAnotherShapeIsToldWhatTheGroupIsAndTheGroupGoesOn() throws Exception {
        SessionDispatcher d = dispatcher(8, Duration.ofSeconds(10));
        ScriptedPeer first = new ScriptedPeer(pairMember("m"), 5);
        Future<?> waiting = firstMember(d, first, "m");

        List<ScriptedPeer> wrong = serveAll(d, List.of(
                ScriptedPeer.concat(SessionRequest.allToAll("m", 3, 8).encode())));
        ExchangeResult r = resultAfterReply(wrong.get(0));
        assertEquals(SessionStatus.GROUP_MISMATCH, r.status());
        assertEquals("group 'm' is forming ALLTOALL of 2 members with 8-byte messages; this client asked for"
                + " ALLTOALL of 3 members with 8-byte messages", r.message());

        serveAll(d, List.of(pairMember("m")));
        waiting.get(10, TimeUnit.SECONDS);
        assertEquals(SessionStatus.OK, resultAfterReply(first).status());
    }

    @Test
    void membersOfAGroupThatNeverFillsAreToldWhenTheTimeoutExpires() throws Exception {
        SessionDispatcher d = dispatcher(8, Duration.ofMillis(200));
        List<ScriptedPeer> peers = serveAll(d, List.of(
                ScriptedPeer.concat(SessionRequest.allToAll("t", 3, 8).encode()),
                ScriptedPeer.concat(SessionRequest.allToAll("t", 3, 8).encode())));

        for (ScriptedPeer p : peers) {
            ExchangeResult r = resultAfterReply(p);
            assertEquals(SessionStatus.GROUP_TIMEOUT, r.status());
            assertEquals("group 't' got 2 of 3 members within 200 ms", r.message());
        }
        // the expired group is gone: a new one of the same name forms afresh
        List<ScriptedPeer> next = serveAll(d, List.of(ScriptedPeer.concat(SessionRequest.allToAll("t", 1, 8).encode(),
                ByteBuffer.allocate(12).putInt(8).position(12).flip())));
        assertEquals(SessionStatus.OK, resultAfterReply(next.get(0)).status());
    }

    @Test
    void aGroupLargerThanTheServersMaximumIsRefused() throws Exception {
        List<ScriptedPeer> peers = serveAll(dispatcher(4, Duration.ofSeconds(1)),
                List.of(ScriptedPeer.concat(SessionRequest.broadcast("big", 5, 0).encode())));

        SessionReply reply = Wire.reply(peers.get(0).written());
        assertEquals(SessionStatus.GROUP_TOO_LARGE, reply.status());
        assertEquals("group 'big' of 5 members exceeds this server's maximum of 4 (servercomm --max-group-size)",
                reply.message());
    }

    @Test
    void aMismatchedMemberThatKeepsItsStreamOpenDoesNotHoldUpTheGroupsForming() throws Exception {
        SessionDispatcher d = dispatcher(8, Duration.ofSeconds(10));
        ScriptedPeer first = new ScriptedPeer(pairMember("m"), 5);
        Future<?> waiting = firstMember(d, first, "m");
        // a member of another shape that, told so, does not end its stream: the server waits for that end
        CountDownLatch hangUp = new CountDownLatch(1);
        byte[] request = ScriptedPeer.concat(SessionRequest.allToAll("m", 3, 8).encode());
        ScriptedPeer wrong = new ScriptedPeer(request, 5);
        Communicator holding = heldOpen(wrong.communicator(), hangUp);
        Future<?> mismatched = sessions.submit(() -> {
            d.serve(holding);
            return null;
        });
        try {
            // answered means the mismatch's result written after the OK reply: the reply alone goes out before the
            // group handler judges the member, and a group completed meanwhile would leave it a group of its own
            int replyLength = SessionReply.ok().encode().remaining();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (wrong.written().remaining() <= replyLength || wrong.consumed() < request.length) {
                assertTrue(System.nanoTime() < deadline, "the mismatched member was not answered within 10 s");
                Thread.onSpinWait();
            }
            // meanwhile the group forms: its second member completes it
            serveAll(d, List.of(pairMember("m")));
            waiting.get(10, TimeUnit.SECONDS);
            assertEquals(SessionStatus.OK, resultAfterReply(first).status());
        } finally {
            hangUp.countDown();
        }
        mismatched.get(10, TimeUnit.SECONDS);
        assertEquals(SessionStatus.GROUP_MISMATCH, resultAfterReply(wrong).status());
    }

    /** What a member of an all-to-all pair named {@code group} sends: its request and its 8-byte contribution. */
    private static byte[] pairMember(String group) {
        return ScriptedPeer.concat(SessionRequest.allToAll(group, 2, 8).encode(),
                ByteBuffer.allocate(12).putInt(8).position(12).flip());
    }

    /** Serves {@code first} until its group, {@code group}, is forming and waits for more members. */
    private Future<?> firstMember(SessionDispatcher d, ScriptedPeer first, String group) {
        Future<?> waiting = sessions.submit(() -> {
            d.serve(first.communicator());
            return null;
        });
        // the second member must find the group formed: reading the first member's request is not enough (its
        // handler registers the group a moment later, which a loaded CI machine stretched into a GROUP_TIMEOUT)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!d.groupForming(group)) {
            assertTrue(System.nanoTime() < deadline, "the first member's group did not form within 10 s");
            Thread.onSpinWait();
        }
        return waiting;
    }

    /**
     * {@code c}, whose reads, once its script is read, wait for {@code hangUp} before they report the end of the
     * stream: a client that keeps its connection open.
     */
    private static Communicator heldOpen(Communicator c, CountDownLatch hangUp) {
        InvocationHandler h = (proxy, method, args) -> {
            if (method.isDefault()) {
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            Object result;
            try {
                result = method.invoke(c, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (method.getName().equals("read") && Integer.valueOf(-1).equals(result)) {
                if (!hangUp.await(20, TimeUnit.SECONDS)) {
                    throw new AssertionError("not hung up within 20 s");
                }
            }
            return result;
        };
        return (Communicator) Proxy.newProxyInstance(GroupHandlerTest.class.getClassLoader(),
                new Class<?>[] {Communicator.class}, h);
    }

    private static ExchangeResult resultAfterReply(ScriptedPeer p) throws Exception {
        ByteBuffer out = p.written();
        assertEquals(SessionStatus.OK, Wire.reply(out).status());
        return Wire.result(out);
    }
}
