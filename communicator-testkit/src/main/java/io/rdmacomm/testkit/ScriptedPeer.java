package io.rdmacomm.testkit;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doCallRealMethod;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.mockito.MockMakers;

/**
 * A Mockito mock of {@link Communicator} for unit tests of code written on the contract: its reads return a
 * scripted byte stream in chunks of at most {@code maxChunk} bytes (short reads, as real transports give, so
 * callers must loop), then -1; everything written to it is recorded; {@code readFully} is the contract's own.
 * Every other call is the mock's: stub or verify it through {@link #communicator()}.
 */
public final class ScriptedPeer {
    /** A proxy, not an instrumented class: an interface needs no more, and it is ready at once on every JDK. */
    private final Communicator communicator = mock(Communicator.class, withSettings().mockMaker(MockMakers.PROXY));
    private final ByteBuffer script;
    private final ByteArrayOutputStream written = new ByteArrayOutputStream();

    /** A peer named {@code name} ({@code peerName()}) that reads {@code script}. */
    public ScriptedPeer(String name, byte[] script, int maxChunk) throws IOException {
        if (maxChunk <= 0) {
            throw new IllegalArgumentException("maxChunk must be positive, got " + maxChunk);
        }
        this.script = ByteBuffer.wrap(script.clone());
        when(communicator.peerName()).thenReturn(name);
        when(communicator.endpoint()).thenReturn(Endpoint.parse("tcp://127.0.0.1:9999"));
        doAnswer(inv -> {
            ByteBuffer dst = inv.getArgument(0);
            if (!this.script.hasRemaining()) {
                return -1;
            }
            int n = Math.min(Math.min(dst.remaining(), this.script.remaining()), maxChunk);
            ByteBuffer slice = this.script.slice().limit(n);
            dst.put(slice);
            this.script.position(this.script.position() + n);
            return n;
        }).when(communicator).read(any());
        doCallRealMethod().when(communicator).readFully(any());
        doAnswer(inv -> {
            ByteBuffer src = inv.getArgument(0);
            byte[] bytes = new byte[src.remaining()];
            src.get(bytes);
            written.write(bytes);
            return null;
        }).when(communicator).write(any());
    }

    /** A peer named {@code "mock-peer"} that reads {@code script}. */
    public ScriptedPeer(byte[] script, int maxChunk) throws IOException {
        this("mock-peer", script, maxChunk);
    }

    /** The mock. */
    public Communicator communicator() {
        return communicator;
    }

    /** A copy of everything written to the mock so far. */
    public ByteBuffer written() {
        return ByteBuffer.wrap(written.toByteArray());
    }

    /** How many scripted bytes were read. */
    public int consumed() {
        return script.position();
    }

    /** The given ints, big-endian, as a length prefix or header would be sent. */
    public static byte[] ints(int... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * Integer.BYTES);
        for (int v : values) {
            b.putInt(v);
        }
        return b.array();
    }

    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /** The remaining bytes of each buffer, in order; the buffers are left as they were. */
    public static byte[] concat(ByteBuffer... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ByteBuffer p : parts) {
            byte[] b = new byte[p.remaining()];
            p.duplicate().get(b);
            out.writeBytes(b);
        }
        return out.toByteArray();
    }
}
