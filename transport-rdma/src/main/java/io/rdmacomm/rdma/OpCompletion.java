package io.rdmacomm.rdma;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.rdma.spi.Completion;
import java.io.IOException;
import java.util.function.BooleanSupplier;

/** The completion of one operation a caller waits for; reusable once the previous operation finished. */
final class OpCompletion implements Completion {
    private final ConnectionState state;
    private volatile boolean finished;
    private volatile IOException error;
    /** Whether the operation finished or the connection failed: the condition to wait for. */
    final BooleanSupplier finishedOrFailed;

    OpCompletion(ConnectionState state) {
        this.state = state;
        this.finishedOrFailed = () -> finished || state.failure() != null;
    }

    /** Makes this completion ready for the next operation. */
    OpCompletion reset() {
        error = null;
        finished = false;
        return this;
    }

    boolean isFinished() {
        return finished;
    }

    @Override
    public void completed() {
        finished = true;
        state.wake();
    }

    @Override
    public void failed(IOException cause) {
        error = cause;
        finished = true;
        state.wake();
    }

    /** Throws the operation's failure, {@code what} ({@code "put into ..."}) naming the operation. */
    void check(String what) throws IOException {
        IOException e = error;
        if (e instanceof RemoteAccessException r) {
            throw new RemoteAccessException(what + ": " + r.getMessage());
        }
        if (e != null) {
            throw new CommunicatorException(what + " failed: " + e.getMessage(), e);
        }
    }
}
