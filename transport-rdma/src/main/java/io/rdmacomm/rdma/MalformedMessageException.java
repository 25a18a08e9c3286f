package io.rdmacomm.rdma;

/** A control message from the peer that breaks the protocol; the connection fails with it. */
final class MalformedMessageException extends Exception {
    private static final long serialVersionUID = 1L;

    private final byte type;

    /** @param reason what is wrong, naming the field ({@code "negative length -1"}) */
    MalformedMessageException(byte type, String reason) {
        super(reason, null, false, false);
        this.type = type;
    }

    /** The name of the message's type ({@code "DATA_INLINE"}). */
    String typeName() {
        return Wire.name(type);
    }
}
