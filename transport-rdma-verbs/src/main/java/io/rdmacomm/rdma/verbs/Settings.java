package io.rdmacomm.rdma.verbs;

/**
 * Per-connection sizes of the verbs provider. Both sides use the same values: a sender's initial credits are the
 * peer's pre-posted receive buffers, which rdma-cm gives no portable way to announce.
 *
 * @param recvSlots receive buffers pre-posted per connection (the peer's send credits)
 * @param sendSlots registered buffers control messages and notifications are copied into before a SEND
 * @param rdmaSlots RDMA writes and reads without a notification that may be outstanding at once
 * @param slotSize bytes per send or receive buffer, provider header included
 */
record Settings(int recvSlots, int sendSlots, int rdmaSlots, int slotSize) {
    static final Settings DEFAULT = new Settings(64, 32, 32, 4096);

    Settings {
        // Credits travel in a 16-bit header field.
        if (recvSlots < 4 || recvSlots > 0xffff || sendSlots < 2 || rdmaSlots < 1 || slotSize < 64) {
            throw new IllegalArgumentException("bad verbs settings " + this);
        }
    }

    /** Send work requests that can be outstanding: a notified write posts two. */
    int maxSendWr() {
        return 2 * sendSlots + rdmaSlots;
    }

    int completionQueueSize() {
        return maxSendWr() + recvSlots;
    }
}
