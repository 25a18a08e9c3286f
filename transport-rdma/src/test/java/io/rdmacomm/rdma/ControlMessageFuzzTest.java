package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import java.nio.ByteBuffer;
import java.util.Map;
import org.junit.jupiter.api.Timeout;

/**
 * Every rdma:// control message decoder on arbitrary bytes (HELLO: {@link HelloMessageFuzzTest}): a message is
 * either refused with a {@link MalformedMessageException} or decodes into fields that encode
 * back to exactly the bytes that arrived; nothing else is thrown and no decode allocates more than the
 * descriptor's key cap allows. The bytes are handed over inside a larger buffer at a nonzero position, as providers
 * deliver them. Regression inputs: {@code src/test/resources/io/rdmacomm/rdma/ControlMessageFuzzTestInputs/}.
 */
@Timeout(120)
class ControlMessageFuzzTest {
    /** The ring size DATA and DATA_INLINE are checked against. */
    private static final int RING_SIZE = 4096;
    /** A decode keeps at most a copy of the message (the key is the only variable part) plus its error text. */
    static final long ALLOCATION_CAP = 64 * 1024;

    /** Checks one received message of its type and returns its re-encoding, or throws for a malformed one. */
    @FunctionalInterface
    interface Decoder {
        ByteBuffer reencode(ByteBuffer m) throws MalformedMessageException;
    }

    /** One entry per message type; a new message is one more line here. */
    private static final Map<Byte, Decoder> DECODERS = Map.ofEntries(
            Map.entry(DataMessage.DATA, m -> {
                DataMessage.check(m, RING_SIZE);
                return DataMessage.encodeData(buffer(), DataMessage.streamPosition(m), DataMessage.ringCursor(m),
                        DataMessage.length(m));
            }),
            Map.entry(DataMessage.DATA_INLINE, m -> {
                DataMessage.check(m, RING_SIZE);
                return DataMessage.encodeInline(buffer(), DataMessage.streamPosition(m), DataMessage.ringCursor(m),
                        m, DataMessage.bytesIndex(m), DataMessage.length(m));
            }),
            Map.entry(CreditMessage.TYPE, m -> {
                CreditMessage.check(m);
                return CreditMessage.encode(buffer(), CreditMessage.ringConsumed(m));
            }),
            Map.entry(AdvertMessage.TYPE, m -> AdvertMessage.decode(m).encode(buffer())),
            Map.entry(ZeroCopyDataMessage.TYPE, m -> {
                ZeroCopyDataMessage.check(m);
                return ZeroCopyDataMessage.encode(buffer(), ZeroCopyDataMessage.seq(m),
                        ZeroCopyDataMessage.streamPosition(m), ZeroCopyDataMessage.length(m));
            }),
            Map.entry(CancelMessage.CANCEL, m -> {
                CancelMessage.check(m);
                return CancelMessage.encode(buffer(), CancelMessage.CANCEL, CancelMessage.seq(m));
            }),
            Map.entry(CancelMessage.CANCEL_ACK, m -> {
                CancelMessage.check(m);
                return CancelMessage.encode(buffer(), CancelMessage.CANCEL_ACK, CancelMessage.seq(m));
            }),
            Map.entry(CloseMessage.TYPE, m -> {
                CloseMessage.check(m);
                return CloseMessage.encode(buffer(), CloseMessage.finalPosition(m));
            }),
            Map.entry(AnnounceMessage.TYPE, m -> AnnounceMessage.decode(m).encode(buffer())),
            Map.entry(RevokeMessage.TYPE, m -> {
                RevokeMessage.check(m);
                return RevokeMessage.encode(buffer(), RevokeMessage.regionId(m));
            }),
            Map.entry(AckMessage.TYPE, m -> {
                AckMessage.check(m);
                return AckMessage.encode(buffer(), AckMessage.acknowledged(m), AckMessage.regionId(m));
            }),
            Map.entry(HeartbeatMessage.TYPE, m -> {
                HeartbeatMessage.check(m);
                return HeartbeatMessage.encode(buffer());
            }),
            Map.entry(PutPlacedMessage.TYPE, m -> {
                PutPlacedMessage.check(m);
                return PutPlacedMessage.encode(buffer(), PutPlacedMessage.seq(m));
            }),
            Map.entry(GetRequestMessage.TYPE, m -> GetRequestMessage.decode(m).encode(buffer())),
            Map.entry(GetDoneMessage.TYPE, m -> {
                GetDoneMessage d = GetDoneMessage.decode(m);
                return d.refusal() == null ? GetDoneMessage.encodeDone(buffer(), d.seq())
                        : GetDoneMessage.encodeRefused(d.seq(), d.refusal());
            }));

    private static ByteBuffer buffer() {
        return ByteBuffer.allocate(RegionDescriptor.HEADER_BYTES + RegionDescriptor.MAX_KEY_BYTES + 64);
    }

    /** The bytes as a provider hands them over: inside a larger buffer, at a position other than 0. */
    static ByteBuffer received(byte[] message) {
        ByteBuffer b = ByteBuffer.allocate(message.length + 7);
        b.put(3, message);
        return b.position(3).limit(3 + message.length);
    }

    @FuzzTest(maxDuration = "30s")
    void controlMessages(byte[] input) {
        ByteBuffer m = received(input);
        ParserChecks.Outcome<ByteBuffer> outcome = ParserChecks.parse(ALLOCATION_CAP, () -> {
            byte type = Wire.type(m);
            Decoder d = DECODERS.get(type);
            if (d == null) {
                throw new MalformedMessageException(type, "unknown message type " + type);
            }
            return d.reencode(m);
        }, MalformedMessageException.class);
        if (outcome.accepted()) {
            assertArrayEquals(input, ParserChecks.bytes(outcome.value()), "a decoded message encodes back");
        }
        assertEquals(3, m.position(), "decoders read by absolute index only");
    }
}
