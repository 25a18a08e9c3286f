package io.rdmacomm.rdma.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpConnectionRequest;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;

/**
 * The JUCX 1.12.1 calls the provider depends on, exercised raw against the installed libucx: context and worker,
 * listener and connect on loopback, memory map and rkey pack/unpack, put then flush, active messages, tag
 * send/receive. Run once with the default transports and once forced onto tcp through the context config.
 */
class JucxFeasibilityTest {
    private static final int HOST = 0;

    private static UcpContext context(String tls) {
        UcpParams p = new UcpParams().requestAmFeature().requestRmaFeature().requestTagFeature()
                .requestWakeupFeature();
        if (!tls.isEmpty()) {
            p.setConfig("TLS", tls);
        }
        return new UcpContext(p);
    }

    private static void progressUntil(BooleanSupplier done, UcpWorker... workers) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean()) {
            for (UcpWorker w : workers) {
                w.progress();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion within 10 s");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "tcp"})
    @Timeout(60)
    void listenerConnectPutAmTag(String tls) throws Exception {
        try (UcpContext sctx = context(tls); UcpContext cctx = context(tls);
                UcpWorker sw = sctx.newWorker(new UcpWorkerParams().requestThreadSafety());
                UcpWorker cw = cctx.newWorker(new UcpWorkerParams().requestThreadSafety())) {
            AtomicReference<UcpConnectionRequest> request = new AtomicReference<>();
            UcpListener listener = sw.newListener(new UcpListenerParams()
                    .setSockAddr(new InetSocketAddress("127.0.0.1", 0)).setConnectionHandler(request::set));
            int port = listener.getAddress().getPort();
            assertTrue(port > 0);
            UcpEndpoint cep = cw.newEndpoint(new UcpEndpointParams().setPeerErrorHandlingMode()
                    .setSocketAddress(new InetSocketAddress("127.0.0.1", port)));
            progressUntil(() -> request.get() != null, sw, cw);
            UcpEndpoint sep = sw.newEndpoint(new UcpEndpointParams().setPeerErrorHandlingMode()
                    .setConnectionRequest(request.get()));

            // server registers a region; client puts into it, flushes, then reads it back
            ByteBuffer target = ByteBuffer.allocateDirect(4096);
            UcpMemory mem = sctx.memoryMap(new UcpMemMapParams().setAddress(UcxUtils.getAddress(target))
                    .setLength(target.capacity()).setMemoryType(HOST));
            ByteBuffer packed = mem.getRemoteKeyBuffer();
            byte[] rkeyBytes = new byte[packed.remaining()];
            packed.get(rkeyBytes);
            ByteBuffer rkeyCopy = ByteBuffer.allocateDirect(rkeyBytes.length).put(rkeyBytes).flip();
            UcpRemoteKey rkey = cep.unpackRemoteKey(rkeyCopy);
            ByteBuffer src = ByteBuffer.allocateDirect(100);
            for (int i = 0; i < 100; i++) {
                src.put(i, (byte) (i + 1));
            }
            UcpRequest put = cep.putNonBlocking(UcxUtils.getAddress(src), 100, mem.getAddress() + 8, rkey, null,
                    HOST);
            UcpRequest flush = cep.flushNonBlocking(null);
            progressUntil(() -> put.isCompleted() && flush.isCompleted(), sw, cw);
            assertEquals(1, target.get(8));
            assertEquals(100, target.get(107));
            ByteBuffer back = ByteBuffer.allocateDirect(100);
            UcpRequest get = cep.getNonBlocking(mem.getAddress() + 8, rkey, UcxUtils.getAddress(back), 100, null,
                    HOST);
            progressUntil(get::isCompleted, sw, cw);
            assertEquals(src, back);

            // active message with header and data
            CompletableFuture<String> am = new CompletableFuture<>();
            sw.setAmRecvHandler(7, (headerAddress, headerSize, data, replyEp) -> {
                ByteBuffer h = UcxUtils.getByteBufferView(headerAddress, headerSize);
                am.complete(h.getInt(0) + ":" + data.getLength() + ":" + data.isDataValid());
                return 0;
            });
            ByteBuffer header = ByteBuffer.allocateDirect(8).putInt(0, 42);
            ByteBuffer payload = ByteBuffer.allocateDirect(1000);
            UcpRequest amSend = cep.sendAmNonBlocking(7, UcxUtils.getAddress(header), 8,
                    UcxUtils.getAddress(payload), 1000, 0, null, HOST);
            progressUntil(() -> am.isDone() && amSend.isCompleted(), sw, cw);
            assertEquals("42:1000:true", am.get());

            // tagged send/receive the other way
            ByteBuffer tagOut = ByteBuffer.allocateDirect(8).putLong(0, 0x1122334455667788L);
            ByteBuffer tagIn = ByteBuffer.allocateDirect(8);
            UcpRequest recv = cw.recvTaggedNonBlocking(UcxUtils.getAddress(tagIn), 8, 5, -1L, null);
            UcpRequest send = sep.sendTaggedNonBlocking(UcxUtils.getAddress(tagOut), 8, 5, null);
            progressUntil(() -> recv.isCompleted() && send.isCompleted(), sw, cw);
            assertEquals(0x1122334455667788L, tagIn.getLong(0));

            rkey.close();
            mem.deregister();
            UcpRequest c1 = cep.closeNonBlockingFlush();
            UcpRequest c2 = sep.closeNonBlockingFlush();
            progressUntil(() -> c1.isCompleted() && c2.isCompleted(), sw, cw);
            listener.close();
        }
    }
}
