package io.rdmacomm.testkit;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A peer process that holds connections, for tests that count what a server spends per connection:
 * {@code <endpoint> <n>} connects n clients one after another, each writing one byte and reading the byte the server
 * sends back (so the transport has carried data both ways), signals {@code CONNECTED <n>} ({@link PeerSignals}),
 * then holds them until its standard input ends, closes them and exits 0.
 */
public final class HoldConnectionsMain {
    private HoldConnectionsMain() {
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[1]);
        List<Communicator> held = new ArrayList<>();
        try {
            ByteBuffer one = ByteBuffer.allocateDirect(1);
            for (int i = 0; i < n; i++) {
                Communicator c = Communicators.connect(args[0]);
                held.add(c);
                one.clear().put(0, (byte) i);
                c.write(one);
                c.sync();
                one.clear();
                c.readFully(one);
                if (one.get(0) != (byte) i) {
                    throw new IllegalStateException("connection " + i + ": the server sent back " + one.get(0));
                }
            }
            PeerSignals.send("CONNECTED " + n);
            while (System.in.read() >= 0) {
                // held until the test closes our input
            }
        } finally {
            for (Communicator c : held) {
                c.close();
            }
        }
    }
}
