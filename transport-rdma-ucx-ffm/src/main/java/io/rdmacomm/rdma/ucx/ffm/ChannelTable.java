package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.CommunicatorException;
import java.util.Arrays;

/**
 * The channels of a node by id, read on every active message without locking or allocating (no boxed keys). An id
 * is a slot in the table plus a generation above bit 16, so a late message for a closed channel never reaches the
 * channel that took its slot. Id 0 is never handed out: it addresses the node itself (connection requests).
 */
final class ChannelTable {
    private static final int SLOT_BITS = 16;
    private static final int SLOT_MASK = (1 << SLOT_BITS) - 1;

    private volatile FfmChannel[] slots = new FfmChannel[64];
    private int generation;

    /** Installs {@code channel} under a new id, which it returns. */
    synchronized int add(FfmChannel channel) throws CommunicatorException {
        FfmChannel[] s = slots;
        int slot = 1;
        while (slot < s.length && s[slot] != null) {
            slot++;
        }
        if (slot > SLOT_MASK) {
            throw new CommunicatorException("more than " + SLOT_MASK + " rdma:// channels in one process");
        }
        FfmChannel[] next = Arrays.copyOf(s, slot < s.length ? s.length : Math.min(s.length * 2, SLOT_MASK + 1));
        next[slot] = channel;
        generation = generation % 0x7fff + 1;
        int id = (generation << SLOT_BITS) | slot;
        channel.assignId(id);
        slots = next;
        return id;
    }

    synchronized void remove(FfmChannel channel) {
        int slot = channel.id() & SLOT_MASK;
        if (slots[slot] == channel) {
            FfmChannel[] s = slots.clone();
            s[slot] = null;
            slots = s;
        }
    }

    /** The channel with this id, or null (unknown, closed, or an id from a peer that lies). */
    FfmChannel get(int id) {
        FfmChannel[] s = slots;
        int slot = id & SLOT_MASK;
        FfmChannel c = slot < s.length ? s[slot] : null;
        return c != null && c.id() == id ? c : null;
    }
}
