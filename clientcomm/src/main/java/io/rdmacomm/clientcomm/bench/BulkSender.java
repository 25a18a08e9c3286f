package io.rdmacomm.clientcomm.bench;

import java.io.IOException;
import java.nio.ByteBuffer;

/** The sending side of a bandwidth run: writes every byte, then waits for the receiver to confirm them all. */
public interface BulkSender {
    /** Takes all remaining bytes of {@code src}. */
    void write(ByteBuffer src) throws IOException;

    /** Returns the count the receiver acknowledges once every byte written has arrived. */
    long awaitAck() throws IOException;
}
