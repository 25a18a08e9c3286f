package io.rdmacomm.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class DescriptorBudgetTest {

    @Test
    void oneDescriptorPerConnectionHoldsTenThousandInTwentyThousand() {
        DescriptorBudget.Plan p = DescriptorBudget.plan(20_000, 42, 10_000, 1, 1024);
        assertEquals(10_000, p.maxConnections());
        assertEquals(1024, p.maxHandshakes());
        assertFalse(p.reduced());
        assertEquals("descriptors: limit 20000, 42 in use, 1 per connection: 10000 sessions, 1024 in handshake",
                p.describe("sessions"));
    }

    @Test
    void connectionsThatDoNotFitAreReducedAndTheLineSaysSo() {
        DescriptorBudget.Plan p = DescriptorBudget.plan(20_000, 42, 10_000, 3, 1024);
        // 20000 - 42 - 64 reserved = 19894 free; 1024 for handshakes; 18870 / 3
        assertEquals(6290, p.maxConnections());
        assertTrue(p.reduced());
        assertTrue(p.describe("sessions").contains("6290 sessions (reduced from 10000 to fit the limit)"),
                p.describe("sessions"));
    }

    /**
     * With a cost per peer process, as many connections as asked for where each could come from a process of its own;
     * else the connections asked for, from as many processes as the rest holds (at least a quarter of it).
     */
    @Test
    void aCostPerPeerProcessLimitsTheProcessesNotTheConnections() {
        DescriptorBudget.Plan roomy = DescriptorBudget.plan(20_000, 42, 1000, 1, 2, 64, 1024);
        assertEquals(1000, roomy.maxConnections());
        assertEquals(1000, roomy.maxPeers());

        DescriptorBudget.Plan p = DescriptorBudget.plan(20_000, 42, 10_000, 1, 2, 64, 1024);
        // 20000 - 42 - 64 reserved - 64 shared = 19830; 1024 for handshakes: 18806 left; 10000 connections, 8806 / 2
        assertEquals(10_000, p.maxConnections());
        assertEquals(4403, p.maxPeers());
        assertFalse(p.reduced());
        assertEquals("descriptors: limit 20000, 42 in use, 64 kept for connections in setup, 1 per connection and 2"
                + " per peer process: 10000 sessions from up to 4403 processes, 1024 in handshake; raise the limit"
                + " (ulimit -n) to hold more", p.describe("sessions"));
        assertTrue(10_000L * 1 + 4403L * 2 + 1024 + 64 + 64 + 42 <= 20_000, "the plan fits the limit");

        DescriptorBudget.Plan tight = DescriptorBudget.plan(20_000, 42, 100_000, 1, 2, 64, 1024);
        assertTrue(tight.maxConnections() < 100_000);
        assertTrue(tight.maxPeers() >= 18_806 / 4 / 2, "a quarter of what is left goes to peer processes");
        assertTrue((long) tight.maxConnections() + 2L * tight.maxPeers() <= 18_806, "the plan fits the limit");
    }

    @Test
    void anUnknownLimitReducesNothing() {
        DescriptorBudget.Plan p = DescriptorBudget.plan(-1, -1, 10_000, 1, 2, 64, 1024);
        assertEquals(10_000, p.maxConnections());
        assertEquals(10_000, p.maxPeers());
        assertTrue(p.describe("sessions").startsWith("descriptors: limit unknown, ? in use"), p.describe("sessions"));
    }

    @Test
    void countsThatAreNotPositiveAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> DescriptorBudget.plan(20_000, 0, 0, 1, 1024));
        assertThrows(IllegalArgumentException.class, () -> DescriptorBudget.plan(20_000, 0, 10, 1, -1, 0, 1024));
    }
}
