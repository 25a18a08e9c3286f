package io.rdmacomm.rdma.ucx.jucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RemoteAccessException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** rdma:// over the real UCX provider in one JVM (shared memory unless UCX_TLS says otherwise). */
@Timeout(60)
class JucxSmokeTest {

    @Test
    void streamAndRemoteMemory() throws Exception {
        try (Communicator server = Communicators.serve("rdma://127.0.0.1:0?ringSize=256k");
                Communicator client = Communicators.connect(server.endpoint().toString());
                Communicator peer = server.accept()) {
            byte[] data = new byte[5_000_000];
            new Random(1).nextBytes(data);
            CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> {
                ByteBuffer all = ByteBuffer.allocateDirect(data.length);
                try {
                    peer.readFully(all);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                byte[] b = new byte[data.length];
                all.flip().get(b);
                return b;
            });
            for (int off = 0; off < data.length; off += 100_000) {
                client.write(ByteBuffer.wrap(data, off, Math.min(100_000, data.length - off)));
            }
            client.sync();
            assertArrayEquals(data, got.get(30, TimeUnit.SECONDS));

            ByteBuffer target = ByteBuffer.allocateDirect(4096);
            MemoryRegion region = peer.register(target, Access.readWrite());
            client.put(ByteBuffer.wrap(new byte[] {1, 2, 3}), region.descriptor(), 100);
            assertEquals(2, target.get(101));
            ByteBuffer back = ByteBuffer.allocateDirect(3);
            client.get(region.descriptor(), 100, back);
            assertEquals(3, back.get(2));
            assertThrows(RemoteAccessException.class,
                    () -> client.put(ByteBuffer.allocate(10), region.descriptor(), 4090));
            region.close();
            assertThrows(RemoteAccessException.class,
                    () -> client.put(ByteBuffer.allocate(1), region.descriptor(), 0));

            client.write(ByteBuffer.wrap(new byte[] {9}));
            client.close();
            ByteBuffer one = ByteBuffer.allocate(2);
            assertEquals(1, peer.read(one));
            assertEquals(-1, peer.read(one));
        }
    }
}
