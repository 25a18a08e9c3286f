package io.rdmacomm.tcp;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A tcp:// echo server for {@link TcpDescriptorFloodTest}, run in a child JVM with a low descriptor limit: serves
 * {@code args[0]}, prints {@code listening <port>}, echoes each peer's first 4 bytes, and exits when its stdin ends.
 * A failing {@code accept()} (the server gave up accepting) prints {@code FATAL} and exits with status 3.
 */
final class FloodServerMain {
    private FloodServerMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Communicator server = Communicators.serve(args[0])) {
            System.out.println("listening " + server.endpoint().port());
            System.out.flush();
            Thread watcher = new Thread(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // until the test closes our stdin
                    }
                } catch (IOException e) {
                    // the test went away: exit too
                }
                System.exit(0);
            }, "stdin-watcher");
            watcher.setDaemon(true);
            watcher.start();
            for (;;) {
                Communicator peer;
                try {
                    peer = server.accept();
                } catch (IOException e) {
                    System.err.println("FATAL: accept() failed: " + e);
                    System.exit(3);
                    return;
                }
                Thread echo = new Thread(() -> {
                    try (peer) {
                        ByteBuffer b = ByteBuffer.allocate(4);
                        peer.readFully(b);
                        peer.write(b.flip());
                        peer.sync();
                        peer.readFully(ByteBuffer.allocate(1));
                    } catch (Exception e) {
                        System.err.println("echo failed: " + e);
                    }
                }, "echo");
                echo.setDaemon(true);
                echo.start();
            }
        }
    }
}
