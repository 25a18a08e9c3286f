package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.nio.ByteBuffer;

/**
 * The peer process of {@link FfmAllocationTest}: serves {@code args[0]}, prints its endpoint, and echoes 8-byte
 * messages of one client until it hangs up.
 */
public final class EchoMain {
    private EchoMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Communicator server = Communicators.serve(args[0])) {
            System.out.println("SERVING " + server.endpoint());
            System.out.flush();
            try (Communicator c = server.accept()) {
                ByteBuffer b = ByteBuffer.allocateDirect(8);
                while (true) {
                    b.clear();
                    try {
                        c.readFully(b);
                    } catch (java.io.EOFException e) {
                        return;
                    }
                    b.flip();
                    c.write(b);
                    c.sync();
                }
            }
        }
    }
}
