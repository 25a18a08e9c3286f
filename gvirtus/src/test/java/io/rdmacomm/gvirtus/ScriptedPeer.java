package io.rdmacomm.gvirtus;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.rdmacomm.api.Communicator;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * A Mockito mock of a communicator whose reads come from a script, at most {@code chunk} bytes per read (short
 * reads on purpose: callers must loop), and whose writes are recorded.
 */
final class ScriptedPeer {
    final Communicator mock = mock(Communicator.class);
    final ByteArrayOutputStream written = new ByteArrayOutputStream();
    private final ByteBuffer script;

    ScriptedPeer(byte[] toRead, int chunk) throws Exception {
        this.script = ByteBuffer.wrap(toRead);
        when(mock.peerName()).thenReturn("scripted-peer");
        doAnswer(inv -> {
            ByteBuffer dst = inv.getArgument(0);
            if (!script.hasRemaining()) {
                return -1;
            }
            int n = Math.min(Math.min(dst.remaining(), script.remaining()), chunk);
            dst.put(script.duplicate().limit(script.position() + n));
            script.position(script.position() + n);
            return n;
        }).when(mock).read(any());
        doAnswer(inv -> {
            ByteBuffer src = inv.getArgument(0);
            byte[] b = new byte[src.remaining()];
            src.get(b);
            written.write(b);
            return null;
        }).when(mock).write(any());
    }

    static ScriptedPeer reading(String hex) throws Exception {
        return new ScriptedPeer(hex(hex), Integer.MAX_VALUE);
    }

    /** How many scripted bytes have been read. */
    int consumed() {
        return script.position();
    }

    String writtenHex() {
        return HexFormat.of().formatHex(written.toByteArray());
    }

    /** Hex digits to bytes; spaces (which group fields in the tests) are ignored. */
    static byte[] hex(String digits) {
        return HexFormat.of().parseHex(digits.replace(" ", ""));
    }
}
