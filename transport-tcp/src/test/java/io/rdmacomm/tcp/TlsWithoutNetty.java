package io.rdmacomm.tcp;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The child of {@link TlsEngineChoiceTest}, on a class path without Netty: prints why {@code tlsEngine=openssl} is
 * refused, which engine auto took, and whether a TLS echo on that engine worked.
 */
final class TlsWithoutNetty {
    private TlsWithoutNetty() {
    }

    public static void main(String[] args) throws Exception {
        String serverUri = args[0];
        try {
            Communicators.connect("tcp://127.0.0.1:1?tls=true&tlsEngine=openssl").close();
            System.out.println("openssl accepted, unexpectedly");
        } catch (IllegalArgumentException e) {
            System.out.println("openssl refused: " + e.getMessage());
        }
        System.out.println("auto: " + TlsConfig.of(Endpoint.parse(serverUri)));
        try (Communicator server = Communicators.serve(serverUri)) {
            String clientUri = serverUri.replace("127.0.0.1:0", "127.0.0.1:" + server.endpoint().port());
            CompletableFuture<Communicator> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return server.accept();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try (Communicator client = Communicators.connect(clientUri);
                    Communicator peer = accepted.get(60, TimeUnit.SECONDS)) {
                client.write(ByteBuffer.wrap(new byte[] {7, 8, 9}));
                client.sync();
                ByteBuffer got = ByteBuffer.allocate(3);
                peer.readFully(got);
                System.out.println(got.get(2) == 9 ? "echo over TLS: ok" : "echo over TLS: wrong bytes");
            }
        }
    }
}
