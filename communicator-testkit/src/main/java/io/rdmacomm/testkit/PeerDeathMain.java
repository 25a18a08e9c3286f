package io.rdmacomm.testkit;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.nio.ByteBuffer;

/**
 * The peer process of {@link PeerDeathContractTest} and {@link PeerSilenceContractTest}: connects, says so
 * ({@link PeerSignals}), then either writes forever ({@code write}) or writes nothing and never reads ({@code sink}) until it is
 * killed.
 */
public final class PeerDeathMain {
    private PeerDeathMain() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        try (Communicator c = Communicators.connect(args[1])) {
            PeerSignals.send("CONNECTED");
            ByteBuffer chunk = ByteBuffer.allocateDirect(64 * 1024);
            if (mode.equals("write")) {
                long total = 0;
                while (true) {
                    c.write(chunk.clear());
                    c.sync();
                    total += chunk.capacity();
                    if (total == 4L * chunk.capacity()) {
                        PeerSignals.send("STREAMING");
                    }
                }
            }
            // sink: hold the connection open and never read; the parent never writes to stdin and kills us
            System.in.read();
        }
    }
}
