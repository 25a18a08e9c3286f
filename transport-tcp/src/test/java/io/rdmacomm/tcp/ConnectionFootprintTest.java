package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What an idle tcp:// connection costs the serving process: one file descriptor (its socket; no selector, no
 * pipe), and at most 16 KiB of heap and direct memory, in every channel mode. The clients run in a child JVM
 * ({@link FootprintClients}), so the descriptors and memory counted here are the server's alone. Each connection
 * first carries a message larger than the small resident buffers (so it borrows and gives back the large ones) and,
 * in the non-blocking modes, waits for it on the readiness selector.
 */
class ConnectionFootprintTest {
    private static final int CONNECTIONS = 1000;
    /** Larger than the resident buffers: each connection borrows a receive and a send buffer once. */
    private static final int MESSAGE = 10_000;
    /** Process-wide descriptors that may open meanwhile: the readiness selector and its wakeup, a class file. */
    private static final int SHARED_DESCRIPTORS = 16;
    private static final long BYTES_PER_IDLE_CONNECTION = 16 * 1024;
    /** What a connection holds for sure: its resident receive and send buffers. */
    private static final long RESIDENT_BYTES = FrameReader.IDLE_BYTES + FrameWriter.IDLE_BYTES;

    @ParameterizedTest
    @ValueSource(strings = {"", "?liveness=0", "?readTimeout=10s", "?busyPoll=20us", "?sendBuffer=1m"})
    @Timeout(180)
    void anIdleServerSideConnectionHoldsOneDescriptorAndAtMostSixteenKiB(String options) throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0" + options)) {
            warmUp(server);
            long descriptorsBefore = descriptors();
            long bytesBefore = usedBytes();
            List<Communicator> accepted = new ArrayList<>(CONNECTIONS);
            Process clients = ChildJvm.of(FootprintClients.class, List.of(server.endpoint().toString(),
                    Integer.toString(CONNECTIONS), Integer.toString(MESSAGE))).redirectError(
                    ProcessBuilder.Redirect.INHERIT).start();
            try {
                ByteBuffer b = ByteBuffer.allocateDirect(MESSAGE);
                for (int i = 0; i < CONNECTIONS; i++) {
                    Communicator peer = server.accept();
                    accepted.add(peer);
                    peer.readFully(b.clear());
                    peer.write(b.flip());
                    peer.sync();
                }
                BufferedReader out = new BufferedReader(new InputStreamReader(clients.getInputStream(),
                        StandardCharsets.UTF_8));
                assertEquals("ready", ChildJvm.readLine(out, 60));
                long descriptors = descriptors() - descriptorsBefore;
                long after = usedBytes();
                long bytes = after - bytesBefore;
                System.out.printf("tcp://%s: %d server-side connections: %d descriptors, %.2f per connection;"
                        + " %d bytes of heap and direct memory, %.0f per connection%n", options, CONNECTIONS,
                        descriptors, descriptors / (double) CONNECTIONS, bytes, bytes / (double) CONNECTIONS);
                assertTrue(descriptors <= CONNECTIONS + SHARED_DESCRIPTORS, descriptors + " descriptors opened for "
                        + CONNECTIONS + " connections: more than one each");
                assertTrue(bytes <= BYTES_PER_IDLE_CONNECTION * CONNECTIONS, bytes / CONNECTIONS
                        + " bytes of heap and direct memory per idle connection");
                // The lower bound is read across closing the connections rather than from the reading before they
                // opened: memory other tests in this JVM left behind may be freed meanwhile, which only lowers the
                // first difference.
                for (Communicator c : accepted) {
                    c.close();
                }
                accepted.clear();
                long released = after - usedBytes();
                assertTrue(released >= RESIDENT_BYTES * CONNECTIONS, "the measurement is off: closing the"
                        + " connections gave back " + released / CONNECTIONS + " bytes each, less than their resident"
                        + " buffers (" + RESIDENT_BYTES + ")");
            } finally {
                clients.getOutputStream().close();
                assertTrue(clients.waitFor(60, TimeUnit.SECONDS));
                for (Communicator c : accepted) {
                    c.close();
                }
            }
        }
    }

    @Test
    @Timeout(10)
    void theProviderStatesOneDescriptorPerConnection() {
        TcpCommunicatorProvider p = new TcpCommunicatorProvider();
        assertEquals(1, p.descriptorsPerConnection(Endpoint.parse("tcp://127.0.0.1:5000")));
        assertEquals(1, p.descriptorsPerConnection(Endpoint.parse("tcp://127.0.0.1:5000?readTimeout=1s")));
    }

    /**
     * Opens and closes a few connections that carry a large message first, so that the process-wide parts (the
     * buffer pool's idle buffers, the readiness thread, classes) exist before the counts start.
     */
    private static void warmUp(Communicator server) throws Exception {
        ByteBuffer b = ByteBuffer.allocateDirect(MESSAGE);
        for (int i = 0; i < 4; i++) {
            CompletableFuture<Communicator> dialled = CompletableFuture.supplyAsync(() -> {
                try {
                    Communicator c = Communicators.connect(server.endpoint().toString());
                    c.write(ByteBuffer.allocateDirect(MESSAGE));
                    c.sync();
                    return c;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            try (Communicator peer = server.accept(); Communicator client = dialled.get(30, TimeUnit.SECONDS)) {
                peer.readFully(b.clear());
                peer.write(b.flip());
                peer.sync();
                client.readFully(b.clear());
            }
        }
    }

    private static long descriptors() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    /**
     * Heap live after a full collection (what each heap pool held after the last collection), plus direct buffers'
     * memory; collects until four readings in a row agree, so that unreachable direct buffers, freed after the
     * collection by their cleaners, are gone. Each reading waits until the collection's references were processed
     * (a phantom-reachable sentinel is enqueued), since on a loaded machine the cleaners' threads lag behind.
     */
    private static long usedBytes() throws InterruptedException {
        long last = -1;
        int agreeing = 0;
        for (int i = 0; i < 50 && agreeing < 3; i++) {
            ReferenceQueue<Object> queue = new ReferenceQueue<>();
            PhantomReference<Object> sentinel = new PhantomReference<>(new Object(), queue);
            System.gc();
            queue.remove(2000);
            Reference.reachabilityFence(sentinel);
            long now = heapAfterCollection() + directBytes();
            agreeing = Math.abs(now - last) < 16 * 1024 ? agreeing + 1 : 0;
            last = now;
        }
        return last;
    }

    private static long heapAfterCollection() {
        long used = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            MemoryUsage u = p.getType() == MemoryType.HEAP ? p.getCollectionUsage() : null;
            if (u != null) {
                used += u.getUsed();
            }
        }
        return used;
    }

    private static long directBytes() {
        for (BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (p.getName().equals("direct")) {
                return p.getMemoryUsed();
            }
        }
        return 0;
    }
}
