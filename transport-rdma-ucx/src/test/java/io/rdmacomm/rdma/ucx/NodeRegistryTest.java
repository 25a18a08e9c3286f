package io.rdmacomm.rdma.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** How a provider's nodes are shared, kept while idle for a while, and destroyed. */
@Timeout(30)
class NodeRegistryTest {
    /** A stand-in node: the registry never looks inside one. */
    private record Node(int serial) {
    }

    private final AtomicInteger made = new AtomicInteger();
    private final List<Node> destroyed = new CopyOnWriteArrayList<>();

    private Node make() {
        return new Node(made.incrementAndGet());
    }

    @Test
    void usersShareOneNodeAndALingeringNodeIsTakenUpAgain() throws Exception {
        NodeRegistry<Node> nodes = new NodeRegistry<>(destroyed::add, TimeUnit.MINUTES.toMillis(10));
        Node a = nodes.acquire("client", this::make);
        assertSame(a, nodes.acquire("client", this::make));
        assertNotSame(a, nodes.acquire("server", this::make), "each key has a node of its own");
        nodes.release("client");
        nodes.release("client");
        assertTrue(nodes.holds("client"), "a node whose last user left lingers");
        assertTrue(destroyed.isEmpty());
        assertSame(a, nodes.acquire("client", this::make), "a user in the lingering time takes the node up again");
        assertEquals(2, made.get(), "no node was made for that user");
        nodes.release("client");
        nodes.release("server");
        assertTrue(destroyed.isEmpty(), "nothing is destroyed before the lingering ends");
    }

    @Test
    void aNodeIsDestroyedOnceWhenItsLingeringEndsAndALaterUserGetsANewOne() throws Exception {
        CountDownLatch gone = new CountDownLatch(1);
        NodeRegistry<Node> nodes = new NodeRegistry<>(n -> {
            destroyed.add(n);
            gone.countDown();
        }, 50);
        Node a = nodes.acquire("client", this::make);
        nodes.release("client");
        assertTrue(gone.await(10, TimeUnit.SECONDS), "the idle node was not destroyed");
        assertEquals(List.of(a), destroyed);
        assertFalse(nodes.holds("client"), "a destroyed node is forgotten");
        Node b = nodes.acquire("client", this::make);
        assertNotSame(a, b);
        nodes.release("client");
    }

    @Test
    void aUserComingBackCancelsTheDestructionOfThatLingering() throws Exception {
        CountDownLatch gone = new CountDownLatch(1);
        NodeRegistry<Node> nodes = new NodeRegistry<>(n -> {
            destroyed.add(n);
            gone.countDown();
        }, 200);
        Node a = nodes.acquire("client", this::make);
        for (int i = 0; i < 20; i++) {
            nodes.release("client");
            assertSame(a, nodes.acquire("client", this::make));
        }
        assertTrue(destroyed.isEmpty(), "a node in use was destroyed");
        nodes.release("client");
        assertTrue(gone.await(10, TimeUnit.SECONDS));
        assertEquals(List.of(a), destroyed, "destroyed once, by the last lingering only");
    }

    @Test
    void withoutLingeringTheLastUserDestroysTheNodeAtOnce() throws Exception {
        NodeRegistry<Node> nodes = new NodeRegistry<>(destroyed::add, 0);
        Node a = nodes.acquire("client", this::make);
        nodes.acquire("client", this::make);
        nodes.release("client");
        assertTrue(destroyed.isEmpty());
        nodes.release("client");
        assertEquals(List.of(a), destroyed);
        assertFalse(nodes.holds("client"));
    }

    @Test
    void aReleaseWithoutAnAcquireIsAnError() throws Exception {
        NodeRegistry<Node> nodes = new NodeRegistry<>(destroyed::add, 0);
        assertThrows(IllegalStateException.class, () -> nodes.release("client"));
        nodes.acquire("client", this::make);
        nodes.release("client");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> nodes.release("client"));
        assertTrue(e.getMessage().contains("client"), e.getMessage());
    }

    @Test
    void aFailedTeardownLeavesTheTimerServingOtherNodes() throws Exception {
        CountDownLatch second = new CountDownLatch(1);
        NodeRegistry<Node> nodes = new NodeRegistry<>(n -> {
            if (n.serial() == 1) {
                throw new IllegalStateException("teardown failed on purpose");
            }
            second.countDown();
        }, 20);
        nodes.acquire("client", this::make);
        nodes.release("client");
        nodes.acquire("server", this::make);
        nodes.release("server");
        assertTrue(second.await(10, TimeUnit.SECONDS), "the timer died with the first node's teardown");
    }

    @Test
    void theLingerPropertyIsReadOrRefusedByName() {
        assertEquals(NodeRegistry.DEFAULT_LINGER_MILLIS, NodeRegistry.lingerMillis(null));
        assertEquals(NodeRegistry.DEFAULT_LINGER_MILLIS, NodeRegistry.lingerMillis(" "));
        assertEquals(0, NodeRegistry.lingerMillis("0"));
        assertEquals(750, NodeRegistry.lingerMillis(" 750 "));
        for (String bad : List.of("-1", "2s", "x")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> NodeRegistry.lingerMillis(bad));
            assertTrue(e.getMessage().contains(NodeRegistry.LINGER_PROPERTY) && e.getMessage().contains(bad),
                    e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> new NodeRegistry<Node>(destroyed::add, -1));
    }
}
