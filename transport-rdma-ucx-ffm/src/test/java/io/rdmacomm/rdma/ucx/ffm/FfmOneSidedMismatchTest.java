package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.HandshakeException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A client whose oneSided differs from the server's is refused by name in the bootstrap, before either side makes a
 * UCX endpoint (libucp 1.13 aborts the process when a context with RMA and one without wire up on shared memory);
 * the server then still serves a client that says the same as it does.
 */
@Timeout(60)
class FfmOneSidedMismatchTest {

    @ParameterizedTest(name = "server {0}, client {1}")
    @CsvSource({"trusted, checked", "checked, trusted"})
    void aClientThatDiffersIsRefusedByName(String server, String client) throws Exception {
        try (Communicator s = Communicators.serve(FfmTestHooks.URI + "&acceptTimeout=30s&oneSided=" + server)) {
            HandshakeException e = assertThrows(HandshakeException.class,
                    () -> Communicators.connect(s.endpoint().with(EndpointOption.ONE_SIDED, client).toString()));
            assertTrue(e.getMessage().contains("oneSided=" + client) && e.getMessage().contains("oneSided=" + server),
                    e.getMessage());
            CompletableFuture<Communicator> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return s.accept();
                } catch (Exception x) {
                    throw new RuntimeException(x);
                }
            });
            try (Communicator c = Communicators.connect(s.endpoint().toString()); Communicator a = accepted.get()) {
                c.write(ByteBuffer.wrap(new byte[] {42}));
                c.sync();
                ByteBuffer one = ByteBuffer.allocate(1);
                a.readFully(one);
                assertEquals(42, one.get(0));
            }
        }
    }
}
