package io.rdmacomm.testkit;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Fault-injecting wrappers around a real communicator, so code above the contract can be tested against the
 * behaviour a transport is allowed to show (short reads, a peer that vanishes mid-stream) without mocks.
 *
 * <pre>{@code
 * Communicator slow = Faults.oneByteReads(accepted);      // every read() returns at most one byte
 * Communicator dying = Faults.closeAfterBytes(client, 100); // the 101st byte written closes the connection
 * }</pre>
 */
public final class Faults {
    private Faults() {
    }

    /**
     * Every {@code read} returns at most one byte; everything else passes through. Communicators it accepts are
     * wrapped the same way.
     */
    public static Communicator oneByteReads(Communicator c) {
        return shortReads(c, 1);
    }

    /**
     * Every {@code read} returns at most {@code max} bytes; everything else passes through. Communicators it
     * accepts are wrapped the same way.
     */
    public static Communicator shortReads(Communicator c, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max read size must be at least 1, got " + max);
        }
        return new ShortReads(c, max);
    }

    /**
     * Delivers the first {@code n} bytes written and then closes the connection, as a peer dying mid-stream
     * would: the write that reaches the limit writes the bytes up to it, syncs them and closes the wrapped
     * communicator; if it had more bytes it throws an {@link IOException} saying how many were not sent. The
     * peer reads exactly {@code n} bytes and then end of stream; later writes throw
     * {@link java.nio.channels.ClosedChannelException}.
     */
    public static Communicator closeAfterBytes(Communicator c, long n) {
        if (n < 0) {
            throw new IllegalArgumentException("byte limit must not be negative, got " + n);
        }
        return new CloseAfterBytes(c, n);
    }

    private static final class ShortReads extends ForwardingCommunicator {
        private final int max;

        ShortReads(Communicator delegate, int max) {
            super(delegate);
            this.max = max;
        }

        @Override
        public Communicator accept() throws IOException {
            return new ShortReads(delegate.accept(), max);
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            if (dst.remaining() <= max) {
                return delegate.read(dst);
            }
            int limit = dst.limit();
            dst.limit(dst.position() + max);
            try {
                return delegate.read(dst);
            } finally {
                dst.limit(limit);
            }
        }
    }

    private static final class CloseAfterBytes extends ForwardingCommunicator {
        private final long limit;
        private long written;

        CloseAfterBytes(Communicator delegate, long limit) {
            super(delegate);
            this.limit = limit;
        }

        @Override
        public void write(ByteBuffer src) throws IOException {
            long allowed = limit - written;
            if (src.remaining() < allowed) {
                written += src.remaining();
                delegate.write(src);
                return;
            }
            int cut = src.remaining() - (int) allowed;
            int srcLimit = src.limit();
            src.limit(srcLimit - cut);
            try {
                delegate.write(src);
                written = limit;
                delegate.sync();
            } finally {
                src.limit(srcLimit);
                delegate.close();
            }
            if (cut > 0) {
                throw new IOException("injected fault: connection to " + delegate.peerName() + " closed after "
                        + limit + " bytes written, " + cut + " bytes not sent");
            }
        }
    }
}
