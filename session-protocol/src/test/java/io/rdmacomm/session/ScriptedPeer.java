package io.rdmacomm.session;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doCallRealMethod;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A Mockito mock of {@link Communicator} that reads a scripted byte stream in chunks of at most
 * {@code maxChunk} bytes (short reads, as real transports give), then -1, and records everything written.
 */
final class ScriptedPeer {
    final Communicator mock = mock(Communicator.class);
    private final ByteBuffer input;
    private final ByteArrayOutputStream written = new ByteArrayOutputStream();

    ScriptedPeer(byte[] input, int maxChunk) throws IOException {
        this.input = ByteBuffer.wrap(input);
        when(mock.peerName()).thenReturn("mock-peer");
        when(mock.endpoint()).thenReturn(Endpoint.parse("tcp://127.0.0.1:9999"));
        doAnswer(inv -> {
            ByteBuffer dst = inv.getArgument(0);
            if (!this.input.hasRemaining()) {
                return -1;
            }
            int n = Math.min(Math.min(dst.remaining(), this.input.remaining()), maxChunk);
            ByteBuffer slice = this.input.slice();
            slice.limit(n);
            dst.put(slice);
            this.input.position(this.input.position() + n);
            return n;
        }).when(mock).read(any());
        doAnswer(inv -> {
            ByteBuffer src = inv.getArgument(0);
            byte[] bytes = new byte[src.remaining()];
            src.get(bytes);
            written.write(bytes);
            return null;
        }).when(mock).write(any());
        // readFully is a default method of the contract: let the mock run it on top of the stubbed read
        doCallRealMethod().when(mock).readFully(any());
    }

    /** Everything written to the mock so far. */
    ByteBuffer written() {
        return ByteBuffer.wrap(written.toByteArray());
    }

    /** How many scripted bytes were consumed. */
    int consumed() {
        return input.position();
    }

    static byte[] concat(ByteBuffer... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ByteBuffer p : parts) {
            byte[] b = new byte[p.remaining()];
            p.duplicate().get(b);
            out.writeBytes(b);
        }
        return out.toByteArray();
    }
}
