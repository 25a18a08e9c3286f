package io.rdmacomm.testkit;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.util.ArrayList;
import java.util.List;

/**
 * A peer process that holds idle connections, for tests that count what a server spends per connection:
 * {@code <endpoint> <n>} connects n clients one after another, signals {@code CONNECTED <n>} ({@link PeerSignals}), then holds them until
 * its standard input ends, closes them and exits 0.
 */
public final class HoldConnectionsMain {
    private HoldConnectionsMain() {
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[1]);
        List<Communicator> held = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                held.add(Communicators.connect(args[0]));
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
