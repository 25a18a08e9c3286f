package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.IbvWC.IbvWcStatus;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RemoteAccessException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the completion queue returns: a completed send or RDMA operation frees its slot and completes
 * ({@link Posting}); a receive delivers its frame to the handler without the header, takes the credits it returns
 * and is posted again. Then queued operations go out as far as the freed resources allow.
 */
final class VerbsCompletions {
    private static final Logger LOG = LoggerFactory.getLogger(VerbsCompletions.class);
    static final int SUCCESS = IbvWcStatus.IBV_WC_SUCCESS.ordinal();
    static final int FLUSHED = IbvWcStatus.IBV_WC_WR_FLUSH_ERR.ordinal();
    private static final int REMOTE_ACCESS = IbvWcStatus.IBV_WC_REM_ACCESS_ERR.ordinal();
    private static final int RETRY_EXCEEDED = IbvWcStatus.IBV_WC_RETRY_EXC_ERR.ordinal();

    private final VerbsChannel channel;
    private final VerbsCalls calls;
    private final Posting posting;
    private final int slotSize;

    VerbsCompletions(VerbsChannel channel, VerbsCalls calls, Posting posting, Settings settings) {
        this.channel = channel;
        this.calls = calls;
        this.posting = posting;
        this.slotSize = settings.slotSize();
    }

    /** Polls the completion queue once and handles what it returned; returns the number of completions. */
    int progressOnce() throws IOException {
        int n = calls.poll();
        for (int i = 0; i < n; i++) {
            handle(calls.completion(i));
        }
        return n;
    }

    private void handle(IbvWC wc) {
        long id = wc.getWr_id();
        int slot = (int) id;
        long kind = id & VerbsCalls.KIND_MASK;
        List<Runnable> after = new ArrayList<>(0);
        if (kind == VerbsCalls.KIND_RECV) {
            received(slot, wc, after);
        } else {
            synchronized (channel) {
                if (kind == VerbsCalls.KIND_SEND) {
                    posting.sendCompleted(slot, (id & VerbsCalls.CHAIN_HEAD) != 0, wc, after);
                } else if (kind == VerbsCalls.KIND_RDMA) {
                    posting.rdmaCompleted(slot, wc, after);
                } else {
                    channel.failLocked(new CommunicatorException("completion with unknown wr_id 0x"
                            + Long.toHexString(id) + " on the connection to " + channel.peerName()), after);
                }
                posting.drain(after);
            }
        }
        for (Runnable r : after) {
            r.run();
        }
    }

    private void received(int slot, IbvWC wc, List<Runnable> after) {
        if (wc.getStatus() != SUCCESS) {
            if (wc.getStatus() != FLUSHED) {
                synchronized (channel) {
                    channel.failLocked(channel.completionError("receive", wc), after);
                }
            }
            return;
        }
        int length = wc.getByte_len();
        ByteBuffer view = calls.messageView(slot);
        if (length < VerbsCalls.HEADER_BYTES || length > slotSize) {
            synchronized (channel) {
                channel.failLocked(new CommunicatorException("peer " + channel.peerName() + " sent a frame of "
                        + length + " bytes; a verbs frame has a 4-byte header and at most " + slotSize + " bytes"),
                        after);
            }
            return;
        }
        byte type = view.get(0);
        int returned = view.getShort(2) & 0xffff;
        if (type != VerbsCalls.TYPE_MESSAGE && type != VerbsCalls.TYPE_CREDIT) {
            synchronized (channel) {
                channel.failLocked(new CommunicatorException("peer " + channel.peerName() + " sent a frame of"
                        + " unknown type " + type + ", expected " + VerbsCalls.TYPE_MESSAGE + " (message) or "
                        + VerbsCalls.TYPE_CREDIT + " (credit)"), after);
            }
            return;
        }
        boolean deliver;
        synchronized (channel) {
            deliver = type == VerbsCalls.TYPE_MESSAGE && channel.usableLocked();
        }
        if (deliver) {
            view.limit(length).position(VerbsCalls.HEADER_BYTES);
            try {
                channel.handler().onMessage(view);
            } catch (RuntimeException e) {
                LOG.warn("handler of the verbs connection to {} threw", channel.peerName(), e);
            } finally {
                view.clear();
            }
        }
        synchronized (channel) {
            posting.credited(returned);
            if (!channel.usableLocked()) {
                return;
            }
            try {
                calls.repostReceive(slot);
                posting.reposted();
            } catch (IOException | RuntimeException e) {
                channel.failLocked(new CommunicatorException("re-posting a receive on the connection to "
                        + channel.peerName() + " failed: " + e.getMessage(), e), after);
                return;
            }
            posting.drain(after);
        }
    }

    /**
     * The failure of the operation {@code what} that {@code wc} completed, on a connection to {@code peer} that
     * is {@code closed} or failed with {@code failure} (null if not).
     */
    static IOException error(String what, IbvWC wc, String peer, boolean closed, IOException failure) {
        int status = wc.getStatus();
        if (status == FLUSHED) {
            if (closed && failure == null) {
                return new AsynchronousCloseException();
            }
            return new CommunicatorException(what + " to " + peer + " was flushed: the connection failed"
                    + (failure != null ? " (" + failure.getMessage() + ")" : ""), status, failure);
        }
        if (status == REMOTE_ACCESS) {
            return new RemoteAccessException(what + " to " + peer + " was refused by the peer's adapter"
                    + " (IBV_WC_REM_ACCESS_ERR): the remote region was deregistered, or its key, bounds or rights"
                    + " do not match");
        }
        String hint = status == RETRY_EXCEEDED ? " (peer unreachable or gone)" : "";
        return new CommunicatorException(what + " to " + peer + " failed: " + statusName(status) + hint
                + " (vendor error 0x" + Integer.toHexString(wc.getVendor_err()) + ")", status, null);
    }

    static String statusName(int status) {
        IbvWcStatus[] all = IbvWcStatus.values();
        return status >= 0 && status < all.length ? all[status].name() : "work completion status " + status;
    }
}
