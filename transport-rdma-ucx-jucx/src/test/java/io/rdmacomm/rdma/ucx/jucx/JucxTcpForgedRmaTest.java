package io.rdmacomm.rdma.ucx.jucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.rdma.HostilePeerContractTest;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.ucx.UcxWire;
import io.rdmacomm.testkit.TransportUnderTest;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;

/**
 * A peer that brings its own UCX with RMA (not the engine, not the provider) and puts into and gets from the
 * server's memory with a key it made itself, over UCX_TLS=tcp: the server's node advertises no tcp put
 * (PUT_ENABLE=n), so UCP emulates put and get with its PUT and GET_REQ active messages, whose handlers the
 * server's context (no UCP_FEATURE_RMA) does not install. Not one byte changes and none is read. (On shared memory
 * such a peer reaches the server through cma, i.e. the kernel's process_vm_writev, which no UCX setting of the
 * server can refuse: see docs/security.md.)
 */
class JucxTcpForgedRmaTest {
    private static final int SIZE = 64 * 1024;

    @Test
    @Timeout(60)
    void ucxsOwnPutAndGetEmulationDoNotReachTheServersMemory() throws Exception {
        TransportUnderTest transport = JucxTestHooks.tcpTransport();
        transport.skipReason().ifPresent(r -> Assumptions.abort(r));
        ByteBuffer victim = ByteBuffer.allocateDirect(SIZE);
        byte[] original = new byte[SIZE];
        new Random(5).nextBytes(original);
        victim.put(original).clear();
        long victimAddress = UcxUtils.getAddress(victim);
        ExecutorService pool = Executors.newCachedThreadPool();
        try (Communicator server = transport.open(transport.serverEndpoint())) {
            server.serve();
            Future<Communicator> accepting = pool.submit(server::accept);
            try (Communicator client = transport.open(transport.withOptions(server.endpoint()))) {
                client.connect();
                Communicator accepted = accepting.get(20, TimeUnit.SECONDS);
                int serverChannel = HostilePeerContractTest.channelOf(accepted).localId();
                byte[] serverNode;
                try (RdmaNode node = new JucxProvider().node(InetAddress.getByName("127.0.0.1"),
                        RdmaChannel.Role.PASSIVE)) {
                    serverNode = node.address();
                }
                ByteBuffer leak = ByteBuffer.allocateDirect(SIZE);
                attack(serverNode, serverChannel, victimAddress, leak);
                // the malformed message sent after put and get on the same endpoint failed the connection, so
                // put and get, ahead of it on the same lane, were handled (or dropped) before
                Future<Integer> read = pool.submit(() -> accepted.read(ByteBuffer.allocate(1)));
                Throwable t = assertThrows(Exception.class, () -> read.get(20, TimeUnit.SECONDS)).getCause();
                assertInstanceOf(IOException.class, t);
                byte[] now = new byte[SIZE];
                victim.get(0, now);
                assertArrayEquals(original, now, "the server's memory after a forged put");
                assertArrayEquals(new byte[SIZE], bytes(leak), "what a forged get read of the server's memory");
                accepted.close();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.capacity()];
        b.get(0, a);
        return a;
    }

    /** Puts 0xEE over the victim and gets it back, with its own context's key; then a malformed engine message. */
    private static void attack(byte[] serverNode, int serverChannel, long victimAddress, ByteBuffer leak)
            throws Exception {
        UcpContext context = new UcpContext(new UcpParams().requestRmaFeature().requestAmFeature());
        UcpWorker worker = context.newWorker(new UcpWorkerParams());
        ByteBuffer src = ByteBuffer.allocateDirect(SIZE);
        for (int i = 0; i < SIZE; i++) {
            src.put(i, (byte) 0xEE);
        }
        UcpMemory mem = context.memoryMap(new UcpMemMapParams().setAddress(UcxUtils.getAddress(src))
                .setLength(SIZE));
        UcpEndpoint ep = worker.newEndpoint(new UcpEndpointParams().setUcpAddress(
                ByteBuffer.allocateDirect(serverNode.length).put(serverNode).flip()));
        UcpRemoteKey forged = ep.unpackRemoteKey(mem.getRemoteKeyBuffer());
        try {
            ep.putNonBlocking(UcxUtils.getAddress(src), SIZE, victimAddress, forged, null, JucxRuntime.HOST_MEMORY);
        } catch (RuntimeException refused) {
            // UCX may refuse the put outright: also fine
        }
        try {
            ep.getNonBlocking(victimAddress, forged, UcxUtils.getAddress(leak), SIZE, null, JucxRuntime.HOST_MEMORY);
        } catch (RuntimeException refused) {
            // as above
        }
        ByteBuffer header = ByteBuffer.allocateDirect(4).putInt(0, serverChannel);
        ByteBuffer garbage = ByteBuffer.allocateDirect(1).put(0, (byte) 99);
        UcpRequest sent = ep.sendAmNonBlocking(UcxWire.AM_CONTROL, UcxUtils.getAddress(header), 4,
                UcxUtils.getAddress(garbage), 1, 0, null, JucxRuntime.HOST_MEMORY);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!sent.isCompleted() && System.nanoTime() < deadline) {
            worker.progress();
        }
        // the forged operations never complete: leave the hostile peer's UCX without cleaning up (a worker
        // destroyed with requests pending asserts in libucp); its process would simply go away
    }
}
