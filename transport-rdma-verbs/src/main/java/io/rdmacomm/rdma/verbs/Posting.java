package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.IbvWC;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.verbs.VerbsMemory.Local;
import io.rdmacomm.rdma.verbs.VerbsMemory.Remote;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.util.ArrayDeque;
import java.util.List;

/**
 * What one connection may post, and what waits for it: free send slots, free RDMA slots, send credits (the peer's
 * pre-posted receives), the receives re-posted but not yet returned to the peer as credits, the completion of
 * each posted slot, and the operations queued in order for a credit or a slot. A sender spends one credit per
 * frame and keeps the last one for credit-only frames, so the two sides can always return credits to each other
 * and a receive is always posted when a SEND arrives (no RNR).
 *
 * <p>Every method runs with the channel's lock held; completions and failures are not called there but added to
 * {@code after}, which the channel runs once it released the lock.
 */
final class Posting {
    private static final Completion NOTHING = new Completion() {
        @Override
        public void completed() {
        }

        @Override
        public void failed(IOException cause) {
        }
    };

    private final VerbsChannel channel;
    private final VerbsCalls calls;
    private final int recvSlots;
    private final Completion[] sendDone;
    private final Completion[] rdmaDone;
    private final boolean[] rdmaIsRead;
    private final int[] freeSend;
    private int freeSendCount;
    private final int[] freeRdma;
    private int freeRdmaCount;
    private int credits;
    private int unreturned;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();

    Posting(VerbsChannel channel, VerbsCalls calls, Settings settings) {
        this.channel = channel;
        this.calls = calls;
        this.recvSlots = settings.recvSlots();
        this.sendDone = new Completion[settings.sendSlots()];
        this.rdmaDone = new Completion[settings.rdmaSlots()];
        this.rdmaIsRead = new boolean[settings.rdmaSlots()];
        this.freeSend = new int[settings.sendSlots()];
        for (int i = 0; i < freeSend.length; i++) {
            freeSend[freeSendCount++] = freeSend.length - 1 - i;
        }
        this.freeRdma = new int[settings.rdmaSlots()];
        for (int i = 0; i < freeRdma.length; i++) {
            freeRdma[freeRdmaCount++] = freeRdma.length - 1 - i;
        }
        this.credits = settings.recvSlots();
    }

    // ---- operations: posted now, or queued behind what waits ---------------------------------------------------

    /** @return the failure of the post, if it failed (the connection has failed then too) */
    IOException message(ByteBuffer message, Completion done, List<Runnable> after) {
        if (pending.isEmpty() && canSendFrame()) {
            return postFrame(VerbsCalls.TYPE_MESSAGE, message, done, after);
        }
        pending.add(Pending.message(copy(message), done));
        return null;
    }

    IOException write(Local local, long localAddress, Remote remote, long remoteAddress, int length,
            ByteBuffer notification, Completion done, List<Runnable> after) {
        boolean fits = notification == null ? freeRdmaCount > 0 : canSendFrame();
        if (pending.isEmpty() && fits) {
            return notification == null
                    ? postRdma(false, localAddress, local.mr.getLkey(), length, remoteAddress, remote.rkey, done, after)
                    : postNotifiedWrite(localAddress, local.mr.getLkey(), length, remoteAddress, remote.rkey,
                            notification, done, after);
        }
        pending.add(Pending.write(local, localAddress, remote, remoteAddress, length,
                notification == null ? null : copy(notification), done));
        return null;
    }

    IOException read(Local local, long localAddress, Remote remote, long remoteAddress, int length,
            Completion done, List<Runnable> after) {
        if (pending.isEmpty() && freeRdmaCount > 0) {
            return postRdma(true, localAddress, local.mr.getLkey(), length, remoteAddress, remote.rkey, done, after);
        }
        pending.add(Pending.read(local, localAddress, remote, remoteAddress, length, done));
        return null;
    }

    private boolean canSendFrame() {
        return freeSendCount > 0 && credits > 1;
    }

    private static byte[] copy(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.get(b.position(), bytes);
        return bytes;
    }

    // ---- posting -----------------------------------------------------------------------------------------------

    private int takeSendSlot(Completion done) {
        int slot = freeSend[--freeSendCount];
        sendDone[slot] = done;
        return slot;
    }

    private IOException postFrame(byte type, ByteBuffer payload, Completion done, List<Runnable> after) {
        int slot = takeSendSlot(done);
        try {
            calls.postSend(slot, fillFrame(slot, type, payload));
            return null;
        } catch (IOException | RuntimeException e) {
            return postFailed("send", slot, e, after);
        }
    }

    private IOException postNotifiedWrite(long localAddress, int lkey, int length, long remoteAddress, int rkey,
            ByteBuffer notification, Completion done, List<Runnable> after) {
        int slot = takeSendSlot(done);
        try {
            calls.postNotifiedWrite(slot, fillFrame(slot, VerbsCalls.TYPE_MESSAGE, notification), localAddress, lkey,
                    length, remoteAddress, rkey);
            return null;
        } catch (IOException | RuntimeException e) {
            return postFailed("notified write", slot, e, after);
        }
    }

    /** Copies a frame into its send slot, returning our credits with it; spends one of the peer's. */
    private int fillFrame(int slot, byte type, ByteBuffer payload) {
        int length = calls.fillSendSlot(slot, type, unreturned, payload);
        unreturned = 0;
        credits--;
        return length;
    }

    private IOException postFailed(String what, int sendSlot, Exception e, List<Runnable> after) {
        sendDone[sendSlot] = null;
        freeSend[freeSendCount++] = sendSlot;
        return channel.postFailed(what, e, after);
    }

    private IOException postRdma(boolean isRead, long localAddress, int lkey, int length, long remoteAddress,
            int rkey, Completion done, List<Runnable> after) {
        int slot = freeRdma[--freeRdmaCount];
        rdmaDone[slot] = done;
        rdmaIsRead[slot] = isRead;
        try {
            calls.postRdma(isRead, slot, localAddress, lkey, length, remoteAddress, rkey);
            return null;
        } catch (IOException | RuntimeException e) {
            rdmaDone[slot] = null;
            freeRdma[freeRdmaCount++] = slot;
            return channel.postFailed(isRead ? "RDMA read" : "RDMA write", e, after);
        }
    }

    /** Posts queued operations while resources allow, then returns credits if enough have accumulated. */
    void drain(List<Runnable> after) {
        while (!pending.isEmpty() && channel.usableLocked()) {
            Pending p = pending.peek();
            boolean fits = p.kind == Pending.MESSAGE || p.bytes != null ? canSendFrame() : freeRdmaCount > 0;
            if (!fits) {
                break;
            }
            // Off the queue before posting: a failed post fails the queue, and this one must fail only once.
            pending.poll();
            IOException refused;
            if (p.kind == Pending.MESSAGE) {
                refused = postFrame(VerbsCalls.TYPE_MESSAGE, ByteBuffer.wrap(p.bytes), p.done, after);
            } else if (p.bytes != null) {
                refused = postNotifiedWrite(p.localAddress, p.local.mr.getLkey(), p.length, p.remoteAddress,
                        p.remote.rkey, ByteBuffer.wrap(p.bytes), p.done, after);
            } else {
                refused = postRdma(p.kind == Pending.READ, p.localAddress, p.local.mr.getLkey(), p.length,
                        p.remoteAddress, p.remote.rkey, p.done, after);
            }
            if (refused != null) {
                Completion d = p.done;
                after.add(() -> d.failed(refused));
            }
        }
        if (unreturned >= recvSlots / 2 && freeSendCount > 0 && credits >= 1 && channel.usableLocked()) {
            postFrame(VerbsCalls.TYPE_CREDIT, null, NOTHING, after);
        }
    }

    /** Fails every queued operation with {@code cause}. */
    void failQueued(IOException cause, List<Runnable> after) {
        for (Pending p = pending.poll(); p != null; p = pending.poll()) {
            Completion d = p.done;
            after.add(() -> d.failed(cause));
        }
    }

    // ---- completions -------------------------------------------------------------------------------------------

    /** A frame arrived that returns {@code returned} of our credits. */
    void credited(int returned) {
        credits += returned;
    }

    /** A receive was posted again: a credit to return to the peer. */
    void reposted() {
        unreturned++;
    }

    void sendCompleted(int slot, boolean chainHead, IbvWC wc, List<Runnable> after) {
        Completion d = sendDone[slot];
        if (wc.getStatus() == VerbsCompletions.SUCCESS) {
            sendDone[slot] = null;
            freeSend[freeSendCount++] = slot;
            if (d != null) {
                after.add(d::completed);
            }
            return;
        }
        IOException e = channel.completionError(chainHead ? "RDMA write of a notified write" : "send", wc);
        if (d != null) {
            sendDone[slot] = null;
            after.add(() -> d.failed(e));
        }
        // The signalled tail of a chain still comes back (flushed) and frees the slot.
        if (!chainHead) {
            freeSend[freeSendCount++] = slot;
        }
        channel.failOnError(wc, after);
    }

    void rdmaCompleted(int slot, IbvWC wc, List<Runnable> after) {
        Completion d = rdmaDone[slot];
        rdmaDone[slot] = null;
        freeRdma[freeRdmaCount++] = slot;
        if (wc.getStatus() == VerbsCompletions.SUCCESS) {
            if (d != null) {
                after.add(d::completed);
            }
            return;
        }
        IOException e = channel.completionError(rdmaIsRead[slot] ? "RDMA read" : "RDMA write", wc);
        if (d != null) {
            after.add(() -> d.failed(e));
        }
        channel.failOnError(wc, after);
    }

    /** Send and RDMA slots whose work requests have not completed. */
    int inFlight() {
        return (freeSend.length - freeSendCount) + (freeRdma.length - freeRdmaCount);
    }

    /** At teardown: fails the operations whose completions will never come. */
    void failOutstanding(List<Runnable> after) {
        failClosed(sendDone, after);
        failClosed(rdmaDone, after);
    }

    private static void failClosed(Completion[] done, List<Runnable> after) {
        for (int i = 0; i < done.length; i++) {
            Completion d = done[i];
            done[i] = null;
            if (d != null && d != NOTHING) {
                after.add(() -> d.failed(new AsynchronousCloseException()));
            }
        }
    }

    /** An operation waiting for a credit or a slot; its bytes were copied when it was issued. */
    private static final class Pending {
        static final int MESSAGE = 0;
        static final int WRITE = 1;
        static final int READ = 2;

        final int kind;
        final byte[] bytes;
        final Local local;
        final long localAddress;
        final Remote remote;
        final long remoteAddress;
        final int length;
        final Completion done;

        private Pending(int kind, byte[] bytes, Local local, long localAddress, Remote remote, long remoteAddress,
                int length, Completion done) {
            this.kind = kind;
            this.bytes = bytes;
            this.local = local;
            this.localAddress = localAddress;
            this.remote = remote;
            this.remoteAddress = remoteAddress;
            this.length = length;
            this.done = done;
        }

        static Pending message(byte[] bytes, Completion done) {
            return new Pending(MESSAGE, bytes, null, 0, null, 0, 0, done);
        }

        static Pending write(Local local, long localAddress, Remote remote, long remoteAddress, int length,
                byte[] notification, Completion done) {
            return new Pending(WRITE, notification, local, localAddress, remote, remoteAddress, length, done);
        }

        static Pending read(Local local, long localAddress, Remote remote, long remoteAddress, int length,
                Completion done) {
            return new Pending(READ, null, local, localAddress, remote, remoteAddress, length, done);
        }
    }
}
