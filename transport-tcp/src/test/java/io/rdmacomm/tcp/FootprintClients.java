package io.rdmacomm.tcp;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The clients of {@link ConnectionFootprintTest}, in a child JVM so that only the server's side of each connection
 * counts in the test's JVM: connects {@code count} times to {@code endpoint}, one after the other, sends
 * {@code size} bytes on each and reads them back, prints "ready", then holds the connections until its standard
 * input ends.
 */
final class FootprintClients {
    private FootprintClients() {
    }

    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        int count = Integer.parseInt(args[1]);
        int size = Integer.parseInt(args[2]);
        List<Communicator> open = new ArrayList<>();
        ByteBuffer b = ByteBuffer.allocateDirect(size);
        try {
            for (int i = 0; i < count; i++) {
                Communicator c = Communicators.connect(endpoint);
                open.add(c);
                b.clear();
                c.write(b);
                c.sync();
                c.readFully(b.clear());
            }
            System.out.println("ready");
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold the connections until the test closes our input
            }
        } finally {
            for (Communicator c : open) {
                c.close();
            }
        }
    }
}
