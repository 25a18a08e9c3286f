package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 12's crafted inputs at a server's port ({@link HostileInputs}), after which a real client must be served,
 * and 64 concurrent clients in one process, all verified, on a bounded number of the transport's threads (not one
 * per connection). A transport's test extends this with its server URI.
 */
@Timeout(240)
public abstract class HostileInputsContractTest {
    private final String serverUri;
    private final byte[] headerLike;
    private final String threadPrefix;
    private final int maxThreads;

    /**
     * {@code serverUri}: a URI to serve on with port 0 and an explicit query ({@code ...?provider=ucx-ffm});
     * {@code headerLike}: the start of a valid first message at the port; at most {@code maxThreads} threads whose
     * names start with {@code threadPrefix} for 64 connections, both sides in this process.
     */
    protected HostileInputsContractTest(String serverUri, byte[] headerLike, String threadPrefix, int maxThreads) {
        this.serverUri = serverUri;
        this.headerLike = headerLike.clone();
        this.threadPrefix = threadPrefix;
        this.maxThreads = maxThreads;
    }

    private static void exchange(Communicator client, Communicator server, int seed) throws Exception {
        byte[] msg = new byte[4096];
        new Random(seed).nextBytes(msg);
        client.write(ByteBuffer.wrap(msg));
        client.sync();
        ByteBuffer got = ByteBuffer.allocate(msg.length);
        server.readFully(got);
        server.write(got.flip());
        server.sync();
        ByteBuffer back = ByteBuffer.allocate(msg.length);
        client.readFully(back);
        assertArrayEquals(msg, back.array(), "echo of peer " + seed);
    }

    @Test
    void craftedInputsLeaveTheServerServingARealClient() throws Exception {
        try (Communicator server = Communicators.serve(serverUri + "&handshakeTimeout=3s&acceptTimeout=30s")) {
            HostileInputs.sendEach(new InetSocketAddress("127.0.0.1", server.endpoint().port()),
                    HostileInputs.crafted(headerLike), Duration.ofSeconds(15));
            try (Communicator client = Communicators.connect(server.endpoint().toString());
                    Communicator accepted = server.accept()) {
                exchange(client, accepted, 1);
            }
        }
    }

    @Test
    void sixtyFourClientsShareTheTransportsThreads() throws Exception {
        int peers = 64;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Communicator> open = new ArrayList<>();
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=60s&ringSize=64k")) {
            String uri = server.endpoint() + "&connectTimeout=60s";
            List<Future<Communicator>> clients = new ArrayList<>();
            for (int i = 0; i < peers; i++) {
                clients.add(pool.submit(() -> Communicators.connect(uri)));
            }
            List<Communicator> accepted = new ArrayList<>();
            for (int i = 0; i < peers; i++) {
                accepted.add(server.accept());
            }
            open.addAll(accepted);
            List<Communicator> connected = new ArrayList<>();
            for (Future<Communicator> f : clients) {
                connected.add(f.get(60, TimeUnit.SECONDS));
            }
            open.addAll(connected);
            long threads = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith(threadPrefix)).count();
            assertTrue(threads <= maxThreads, threads + " " + threadPrefix + "* threads for " + peers
                    + " connections (both sides)");
            // each client's first bytes tell which accepted connection is its peer
            for (int i = 0; i < peers; i++) {
                connected.get(i).write(ByteBuffer.allocate(4).putInt(0, i));
                connected.get(i).sync();
            }
            Communicator[] byClient = new Communicator[peers];
            for (Communicator a : accepted) {
                ByteBuffer id = ByteBuffer.allocate(4);
                a.readFully(id);
                byClient[id.getInt(0)] = a;
            }
            for (int i = 0; i < peers; i++) {
                exchange(connected.get(i), byClient[i], i);
            }
        } finally {
            for (Communicator c : open) {
                c.close();
            }
            pool.shutdownNow();
        }
    }
}
