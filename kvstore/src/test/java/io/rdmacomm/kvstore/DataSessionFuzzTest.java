package io.rdmacomm.kvstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.Access;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.testkit.ScriptedPeer;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import org.junit.jupiter.api.Timeout;

/**
 * The kv server's data plane on arbitrary bytes from a client, in short reads, with the attach either fuzzed too
 * (input's first byte even) or valid for an open session with a registered buffer (odd), so requests reach the
 * store. The server answers the attach, then exactly one well-formed 16-byte reply per whole request (a status
 * the protocol defines), and stops at the first request cut short; a request it could not parse would show as a
 * missing reply, since the session swallows the failure. The one-sided transfers are the mock's no-ops.
 * Regression inputs: {@code src/test/resources/io/rdmacomm/kvstore/DataSessionFuzzTestInputs/}.
 */
@Timeout(120)
class DataSessionFuzzTest {
    private static final int BUFFER = 1 << 16;
    private static final KvServerConfig CONFIG = KvServerConfig.of("127.0.0.1", 0, Endpoint.parse("tcp://127.0.0.1:0"))
            .withValueTransfer(ValueTransfer.ONE_SIDED)
            .withMemory(1 << 20, 1 << 16);

    /** Whole requests in {@code requests} (16-byte header, then the key), up to the first one cut short. */
    private static int wholeRequests(ByteBuffer requests) {
        int n = 0;
        while (requests.remaining() >= DataWire.REQUEST_BYTES) {
            int keyLength = requests.getShort(requests.position() + 2) & 0xffff;
            if (requests.remaining() < DataWire.REQUEST_BYTES + keyLength) {
                break;
            }
            requests.position(requests.position() + DataWire.REQUEST_BYTES + keyLength);
            n++;
        }
        return n;
    }

    @FuzzTest(maxDuration = "30s")
    void dataPlane(byte[] input) throws Exception {
        boolean attach = input.length > 0 && (input[0] & 1) == 1;
        Sessions sessions = new Sessions(4);
        Sessions.Session session = sessions.open("fuzz");
        session.buffer(new RegionDescriptor(0x1000, BUFFER, EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE),
                new byte[8]));
        ByteBuffer script = ByteBuffer.allocate(DataWire.ATTACH_BYTES + input.length);
        if (attach) {
            script.putInt(DataWire.MAGIC).putShort(DataWire.VERSION).putLong(session.id).putLong(session.token());
            script.put(input, 1, input.length - 1);
        } else {
            script.put(input);
        }
        byte[] bytes = ParserChecks.bytes(script.flip());
        ScriptedPeer peer = new ScriptedPeer(bytes, 7);
        Store store = new Store(ByteBuffer.allocate(1 << 20));
        new DataSession(peer.communicator(), store, sessions, CONFIG, null, java.util.concurrent.ConcurrentHashMap.newKeySet()).run();

        ByteBuffer written = peer.written();
        if (bytes.length < DataWire.ATTACH_BYTES) {
            assertEquals(0, written.remaining(), "no answer to an attach cut short");
            return;
        }
        int status = written.get() & 0xff;
        int text = written.getShort() & 0xffff;
        written.position(written.position() + text);
        if (status != DataWire.OK) {
            assertTrue(!attach, "the valid attach is accepted, not refused with status " + status);
            assertEquals(0, written.remaining(), "nothing after a refused attach");
            return;
        }
        int requests = wholeRequests(ByteBuffer.wrap(bytes, DataWire.ATTACH_BYTES,
                bytes.length - DataWire.ATTACH_BYTES).slice());
        assertEquals(requests * DataWire.REPLY_BYTES, written.remaining(), "one reply per whole request");
        while (written.hasRemaining()) {
            int s = written.get() & 0xff;
            assertTrue(s == DataWire.OK || KvException.Code.ofWire(s) != null, "reply status " + s);
            assertEquals(0, written.get(), "reply byte 1");
            assertEquals(0, written.getShort(), "reply bytes 2-3");
            written.position(written.position() + 12);
        }
    }
}
