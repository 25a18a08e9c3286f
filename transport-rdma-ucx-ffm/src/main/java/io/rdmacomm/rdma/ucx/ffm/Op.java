package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.ucx.ffm.UcpRequest;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * One operation in flight: a reusable {@link UcpRequest} (libucp's answer is polled, never called back), native
 * memory for the header and small payload of its active message, and the stage of a multi-step write (put, flush,
 * notification). Pooled by the {@link FfmNode}; whoever holds it (the issuing thread, then the node's poller) is
 * the only thread touching it, as UcpRequest requires.
 */
final class Op {
    static final int SEND = 0;
    static final int PUT = 1;
    static final int FLUSH = 2;
    static final int NOTE = 3;
    static final int EAGER_WRITE = 4;
    static final int GET = 5;
    static final int RECEIVE_WRITE = 6;
    /** An endpoint close that outlived its wait: only its request is left to free. */
    static final int CLOSE = 7;

    private final FfmNode node;
    final UcpRequest request;
    private final MemorySegment pooledMemory;
    /** The native memory this operation's message is built in: the pooled slot, or a larger one-off block. */
    MemorySegment memory;
    long address;
    private ByteBuffer pooledView;
    private Arena oversized;
    FfmChannel channel;
    Completion done;
    int stage;
    int noteLength;
    String what;

    Op(FfmNode node, UcpRequest request, MemorySegment memory) {
        this.node = node;
        this.request = request;
        this.pooledMemory = memory;
        this.memory = memory;
        this.address = memory.address();
        this.pooledView = memory.asByteBuffer();
    }

    /** Makes {@code size} bytes of native memory this op's message space. */
    void ensureCapacity(long size) {
        if (size > pooledMemory.byteSize()) {
            oversized = Arena.ofShared();
            memory = oversized.allocate(size, 8);
            address = memory.address();
        }
    }

    /** The first {@code length} bytes of the message space as a buffer (allocation-free for pooled memory). */
    ByteBuffer view(int length) {
        ByteBuffer b = oversized == null ? pooledView : memory.asByteBuffer();
        return b.clear().limit(length);
    }

    Op start(FfmChannel channel, int stage, Completion done, String what) {
        this.channel = channel;
        this.stage = stage;
        this.done = done;
        this.what = what;
        this.noteLength = 0;
        return this;
    }

    /** The request finished (inside its call or seen by the poller): the next stage, or the outcome. */
    void advance() {
        if (stage == CLOSE) {
            node.recycle(this);
            return;
        }
        int status = request.status();
        if (status < 0) {
            fail(new CommunicatorException(what + " on the connection to " + channel.peerName()
                    + " failed (UCX status " + status + ")", status, null));
            return;
        }
        switch (stage) {
            case PUT -> {
                stage = FLUSH;
                channel.flush(this);
            }
            case EAGER_WRITE -> {
                // the active message left this side; the flush reports it placed, as a write's completion says
                stage = FLUSH;
                channel.flush(this);
            }
            case FLUSH -> {
                Completion d = done;
                if (noteLength > 0) {
                    stage = NOTE;
                    channel.sendNote(this);
                } else {
                    node.recycle(this);
                }
                d.completed();
            }
            case NOTE -> node.recycle(this);
            case RECEIVE_WRITE -> {
                if (noteLength > 0) {
                    channel.deliver(view(noteLength));
                }
                node.recycle(this);
            }
            default -> {
                Completion d = done;
                node.recycle(this);
                if (d != null) {
                    d.completed();
                }
            }
        }
    }

    /** Fails this operation without (further) issuing: its completion, or the connection for a notification. */
    void fail(IOException cause) {
        FfmChannel ch = channel;
        Completion d = done;
        boolean connectionLevel = stage == NOTE || stage == RECEIVE_WRITE || d == null;
        node.recycle(this);
        if (connectionLevel) {
            ch.failConnection(cause);
        } else {
            d.failed(cause);
        }
    }

    /** Back to the pool: forgets the operation and gives back one-off memory. */
    void reset() {
        channel = null;
        done = null;
        if (oversized != null) {
            oversized.close();
            oversized = null;
            memory = pooledMemory;
            address = pooledMemory.address();
        }
    }
}
