package io.rdmacomm.rdma.ucx;

import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaProvider;

/**
 * The wire format of the UCX providers ({@code ucx-jucx}, {@code ucx-ffm}), defined once so that a JUCX peer and an
 * FFM peer understand each other (a JDK 17 client and a JDK 25 server with {@code provider=ucx}). Everything else
 * they exchange is UCX's own (worker addresses, packed remote keys) or the engine's.
 *
 * <pre>
 * AM_CONTROL  header: u32 receiver channel id              data: one engine message (at most MAX_CONTROL bytes)
 * AM_WRITE    header: u32 receiver channel id · u64 destination address · u32 length · notification (engine
 *             message, may be empty)                       data: the written bytes (length)
 * </pre>
 *
 * All big-endian. A receiver checks destination and length against the regions of the receiving channel registered
 * for remote write, and fails the channel's connection (placing nothing) for a write outside them: the owner's
 * check, which a peer that bypasses its own engine cannot skip.
 */
public final class UcxWire {
    /** The wire family both UCX providers report ({@link RdmaProvider#wireFamily()}). */
    public static final String FAMILY = "ucx";
    /** Active message id of an engine message. */
    public static final int AM_CONTROL = 2;
    /**
     * Active message id of a write carried in an active message, which the receiver checks and places: wherever a
     * node withholds one-sided access ({@link UcxTransports#oneSidedWithheld()}: shared memory, tcp).
     */
    public static final int AM_WRITE = 3;
    /** Bytes of the receiver channel id at the start of every header. */
    public static final int RECEIVER_ID = 4;
    /** Bytes of an {@link #AM_WRITE} header before the notification. */
    public static final int WRITE_HEADER = RECEIVER_ID + 8 + 4;
    /** Offset of the destination address in an {@link #AM_WRITE} header. */
    public static final int WRITE_ADDRESS = RECEIVER_ID;
    /** Offset of the length in an {@link #AM_WRITE} header. */
    public static final int WRITE_LENGTH = RECEIVER_ID + 8;
    /**
     * The largest engine message either provider sends or accepts ({@link RdmaChannel#maxMessageSize()}): the
     * smaller of the two providers' former limits, so that neither sends what the other refuses.
     */
    public static final int MAX_CONTROL = 4096;

    private UcxWire() {
    }
}
