package io.rdmacomm.tcp;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One-sided operations emulated with frames: the initiator's {@code put} and {@code get}, which send a PUT or GET
 * and wait for its answer, and the target's service of the peer's PUT and GET against the registered regions of
 * {@link RemoteMemory}, which runs in whichever thread reads the socket and never waits for the application.
 */
final class OneSided implements FrameReader.RemoteFrames {
    /** Makes sure a thread reads the socket, which answers need, before an operation is sent. */
    interface Progress {
        void ensureStarted() throws IOException;
    }

    private final RemoteMemory memory;
    private final FrameWriter out;
    private final Progress progress;
    private final long timeout;

    OneSided(RemoteMemory memory, FrameWriter out, Progress progress, long timeout) {
        this.memory = memory;
        this.out = out;
        this.progress = progress;
        this.timeout = timeout;
    }

    // ---- initiator ---------------------------------------------------------------------------------------------

    void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        int count = src.remaining();
        remote.checkAccess(offset, count, Access.REMOTE_WRITE);
        long key = RemoteMemory.keyOf(remote);
        if (count > Wire.MAX_PUT_BYTES) {
            throw new IllegalArgumentException("a put carries at most " + Wire.MAX_PUT_BYTES + " bytes, got " + count);
        }
        perform(null, id -> out.put(id, key, offset, src),
                "put of " + count + " bytes at offset " + offset + " of region " + remote);
    }

    void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        int count = dst.remaining();
        remote.checkAccess(offset, count, Access.REMOTE_READ);
        long key = RemoteMemory.keyOf(remote);
        perform(dst, id -> out.get(id, key, offset, count),
                "get of " + count + " bytes at offset " + offset + " of region " + remote);
    }

    /** Sends an operation's request frame. */
    @FunctionalInterface
    private interface Request {
        void send(long op) throws IOException;
    }

    /** Sends a request and waits for its answer; a GET's bytes go to {@code dst}. */
    private void perform(ByteBuffer dst, Request request, String what) throws IOException {
        progress.ensureStarted();
        RemoteMemory.Op op = memory.begin(dst);
        try {
            request.send(op.id);
        } catch (IOException e) {
            memory.claim(op.id);
            throw e;
        }
        op.await(timeout, what);
    }

    // ---- target, and the answers that complete the initiator's operations ----------------------------------------

    @Override
    public void onPut(long op, long key, long offset, int count, FrameReader in) throws IOException {
        String refused = memory.refusal(key, offset, count, Access.REMOTE_WRITE);
        ByteBuffer target = refused == null ? memory.window(key, offset, count) : null;
        if (refused == null && target == null) {
            refused = deregistered(key);
        }
        if (target != null) {
            in.receive(target);
        } else {
            in.skip(count);
        }
        out.answer(op, refused);
    }

    @Override
    public void onGet(long op, long key, long offset, int count) throws IOException {
        String refused = memory.refusal(key, offset, count, Access.REMOTE_READ);
        ByteBuffer source = refused == null ? memory.window(key, offset, count) : null;
        if (source != null) {
            out.answerGet(op, source);
        } else {
            out.answer(op, refused != null ? refused : deregistered(key));
        }
    }

    private static String deregistered(long key) {
        return "region with key " + Long.toHexString(key) + " was deregistered";
    }

    @Override
    public void onGetResponse(long id, int count, FrameReader in) throws IOException {
        RemoteMemory.Op op = memory.claim(id);
        if (op == null) {
            in.skip(count); // its caller gave up waiting
        } else if (count != op.dst.remaining()) {
            in.skip(count);
            op.finish(null, new CommunicatorException("the peer answered with " + count + " bytes, "
                    + op.dst.remaining() + " were asked for"));
        } else {
            try {
                in.receive(op.dst);
            } catch (IOException e) {
                op.finish(null, e);
                throw e;
            }
            op.finish(null, null);
        }
    }

    @Override
    public void onAck(long id) {
        RemoteMemory.Op op = memory.claim(id);
        if (op != null) {
            op.finish(null, null);
        }
    }

    @Override
    public void onError(long id, String reason) {
        RemoteMemory.Op op = memory.claim(id);
        if (op != null) {
            op.finish(reason, null);
        }
    }
}
