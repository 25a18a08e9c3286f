package io.rdmacomm.collectives;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doCallRealMethod;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.rdmacomm.api.Communicator;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/** A Mockito mock of a communicator whose reads come from a script and whose writes are recorded. */
final class ScriptedPeer {
    final Communicator mock = mock(Communicator.class);
    final ByteArrayOutputStream written = new ByteArrayOutputStream();
    private final ByteBuffer script;

    ScriptedPeer(String name, byte[] toRead) throws Exception {
        this.script = ByteBuffer.wrap(toRead);
        when(mock.peerName()).thenReturn(name);
        doAnswer(inv -> {
            ByteBuffer dst = inv.getArgument(0);
            if (!script.hasRemaining()) {
                return -1;
            }
            // short reads on purpose: callers must loop
            int n = Math.min(Math.min(dst.remaining(), script.remaining()), 3);
            ByteBuffer slice = script.duplicate().limit(script.position() + n);
            dst.put(slice);
            script.position(script.position() + n);
            return n;
        }).when(mock).read(any());
        doCallRealMethod().when(mock).readFully(any());
        doAnswer(inv -> {
            ByteBuffer src = inv.getArgument(0);
            byte[] b = new byte[src.remaining()];
            src.get(b);
            written.write(b);
            return null;
        }).when(mock).write(any());
    }

    static byte[] frame(int... ints) {
        ByteBuffer b = ByteBuffer.allocate(ints.length * 4);
        for (int i : ints) {
            b.putInt(i);
        }
        return b.array();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
