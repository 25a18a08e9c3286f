package io.rdmacomm.rdma.bench;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
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
 * Raw JUCX baseline for the benchmark, two processes, busy-polling one worker each, no rdmacomm code:
 * {@code lat} = 8 B tagged ping-pong round trip (what ucx_perftest tag_lat measures, as RTT), {@code put} = 1 MiB
 * put + flush into a region the server registered (put_bw), {@code am} = 1 MiB tagged sends (stream-like).
 *
 * <pre>
 *   java ... RawJucxBaseline server PORT           # serves until the client is done
 *   java ... RawJucxBaseline client HOST PORT lat|put|tag ITERATIONS
 * </pre>
 */
public final class RawJucxBaseline {
    private static final int HOST = 0;
    private static final int MIB = 1 << 20;

    private RawJucxBaseline() {
    }

    public static void main(String[] args) throws Exception {
        try (UcpContext ctx = new UcpContext(new UcpParams().requestTagFeature().requestRmaFeature());
                UcpWorker w = ctx.newWorker(new UcpWorkerParams())) {
            if (args[0].equals("server")) {
                server(ctx, w, Integer.parseInt(args[1]));
            } else {
                client(ctx, w, args[1], Integer.parseInt(args[2]), args[3], Integer.parseInt(args[4]));
            }
        }
    }

    private static void await(UcpWorker w, UcpRequest r) throws Exception {
        while (!r.isCompleted()) {
            w.progress();
        }
    }

    private static void server(UcpContext ctx, UcpWorker w, int port) throws Exception {
        AtomicReference<UcpConnectionRequest> req = new AtomicReference<>();
        UcpListener l = w.newListener(new UcpListenerParams().setSockAddr(new InetSocketAddress("127.0.0.1", port))
                .setConnectionHandler(req::set));
        System.out.println("LISTENING " + l.getAddress().getPort());
        System.out.flush();
        while (req.get() == null) {
            w.progress();
        }
        UcpEndpoint ep = w.newEndpoint(new UcpEndpointParams().setConnectionRequest(req.get()));
        ByteBuffer region = ByteBuffer.allocateDirect(MIB);
        // RAW_UCX_ALLOC=1: let UCX allocate the target region (shared-memory mappable) instead of mapping ours
        UcpMemory mem = System.getenv("RAW_UCX_ALLOC") != null
                ? ctx.memoryMap(new UcpMemMapParams().allocate().setLength(MIB).setMemoryType(HOST))
                : ctx.memoryMap(new UcpMemMapParams().setAddress(UcxUtils.getAddress(region)).setLength(MIB)
                        .setMemoryType(HOST));
        ByteBuffer rkey = mem.getRemoteKeyBuffer();
        ByteBuffer hello = ByteBuffer.allocateDirect(8 + rkey.remaining());
        hello.putLong(mem.getAddress()).put(rkey).flip();
        ByteBuffer len = ByteBuffer.allocateDirect(8).putLong(0, hello.remaining());
        await(w, ep.sendTaggedNonBlocking(UcxUtils.getAddress(len), 8, 1, null));
        await(w, ep.sendTaggedNonBlocking(UcxUtils.getAddress(hello), hello.remaining(), 2, null));
        ByteBuffer ping = ByteBuffer.allocateDirect(8);
        ByteBuffer big = ByteBuffer.allocateDirect(MIB);
        long pingAddr = UcxUtils.getAddress(ping);
        long bigAddr = UcxUtils.getAddress(big);
        while (true) {
            UcpRequest r = w.recvTaggedNonBlocking(pingAddr, 8, 0, 0, null);
            await(w, r);
            long tag = r.getSenderTag();
            if (tag == 9) {
                break;
            }
            if (tag == 6) {
                // the target stops progressing until the client's flush completed (told over a plain socket) or
                // for at most the given time: shows whether put + flush need the target's progress
                idleUntilTold(w, ep, ping, pingAddr);
            } else if (tag == 3) {
                await(w, ep.sendTaggedNonBlocking(pingAddr, 8, 3, null));
            } else if (tag == 4) {
                long n = ping.getLong(0);
                for (long i = 0; i < n; i++) {
                    await(w, w.recvTaggedNonBlocking(bigAddr, MIB, 5, -1L, null));
                }
                await(w, ep.sendTaggedNonBlocking(pingAddr, 8, 4, null));
            }
        }
        mem.deregister();
        // the client is gone once it said so: a flush-close could stay pending and trip ucp_worker_destroy
        await(w, ep.closeNonBlockingForce());
        l.close();
    }

    /**
     * Sends the client the port of a loopback socket, then makes no UCX progress until the client writes a byte on
     * it (its flush completed) or the bound in {@code ping} passes.
     */
    private static void idleUntilTold(UcpWorker w, UcpEndpoint ep, ByteBuffer ping, long pingAddr) throws Exception {
        int bound = (int) ping.getLong(0);
        try (ServerSocket control = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            ping.putLong(0, control.getLocalPort());
            await(w, ep.sendTaggedNonBlocking(pingAddr, 8, 6, null));
            control.setSoTimeout(bound);
            try (Socket s = control.accept()) {
                s.setSoTimeout(bound);
                s.getInputStream().read();
            } catch (SocketTimeoutException e) {
                // the flush did not complete without this side's progress
            }
        }
    }

    private static void client(UcpContext ctx, UcpWorker w, String host, int port, String mode, int iters)
            throws Exception {
        UcpEndpoint ep = w.newEndpoint(new UcpEndpointParams().setSocketAddress(new InetSocketAddress(host, port)));
        ByteBuffer len = ByteBuffer.allocateDirect(8);
        await(w, w.recvTaggedNonBlocking(UcxUtils.getAddress(len), 8, 1, -1L, null));
        ByteBuffer hello = ByteBuffer.allocateDirect((int) len.getLong(0));
        await(w, w.recvTaggedNonBlocking(UcxUtils.getAddress(hello), hello.capacity(), 2, -1L, null));
        long remote = hello.getLong(0);
        UcpRemoteKey rkey = ep.unpackRemoteKey(hello.position(8).slice());
        ByteBuffer ping = ByteBuffer.allocateDirect(8);
        long pingAddr = UcxUtils.getAddress(ping);
        ByteBuffer big = ByteBuffer.allocateDirect(MIB);
        long bigAddr = UcxUtils.getAddress(big);
        switch (mode) {
            case "lat" -> {
                long[] rtt = new long[iters];
                for (int i = -iters / 10; i < iters; i++) {
                    long t0 = System.nanoTime();
                    UcpRequest r = w.recvTaggedNonBlocking(pingAddr, 8, 3, -1L, null);
                    await(w, ep.sendTaggedNonBlocking(pingAddr, 8, 3, null));
                    await(w, r);
                    if (i >= 0) {
                        rtt[i] = System.nanoTime() - t0;
                    }
                }
                Arrays.sort(rtt);
                System.out.printf("raw-jucx tag 8B RTT p50 %.2f us p99 %.2f us%n", rtt[iters / 2] / 1e3,
                        rtt[iters * 99 / 100] / 1e3);
            }
            case "putflush" -> {
                long[] t = new long[iters];
                for (int i = -iters / 10; i < iters; i++) {
                    long t0 = System.nanoTime();
                    ep.putNonBlocking(pingAddr, 8, remote, rkey, null, HOST);
                    await(w, ep.flushNonBlocking(null));
                    if (i >= 0) {
                        t[i] = System.nanoTime() - t0;
                    }
                }
                Arrays.sort(t);
                System.out.printf("raw-jucx put 8B + flush p50 %.2f us p99 %.2f us%n", t[iters / 2] / 1e3,
                        t[iters * 99 / 100] / 1e3);
            }
            case "idleput" -> {
                ping.putLong(0, 1000);
                await(w, ep.sendTaggedNonBlocking(pingAddr, 8, 6, null));
                await(w, w.recvTaggedNonBlocking(pingAddr, 8, 6, -1L, null));
                Socket control = new Socket(InetAddress.getLoopbackAddress(), (int) ping.getLong(0));
                long t0 = System.nanoTime();
                if (System.getenv("RAW_PENDING_MSG") != null) {
                    // a message the sleeping target has not consumed yet sits in its queue during the flush
                    await(w, ep.sendTaggedNonBlocking(pingAddr, 8, 7, null));
                }
                ep.putNonBlocking(bigAddr, 8, remote, rkey, null, HOST);
                await(w, ep.flushNonBlocking(null));
                double ms = (System.nanoTime() - t0) / 1e6;
                control.getOutputStream().write(1);
                control.close();
                System.out.printf("raw-jucx put 8B + flush while the target does not progress (for up to 1 s, until"
                        + " the flush completes): %.1f ms%n", ms);
            }
            case "put" -> {
                for (int i = 0; i < 10; i++) {
                    ep.putNonBlockingImplicit(bigAddr, MIB, remote, rkey);
                }
                await(w, ep.flushNonBlocking(null));
                long t0 = System.nanoTime();
                for (int i = 0; i < iters; i++) {
                    ep.putNonBlocking(bigAddr, MIB, remote, rkey, null, HOST);
                    await(w, ep.flushNonBlocking(null));
                }
                double s = (System.nanoTime() - t0) / 1e9;
                System.out.printf("raw-jucx put+flush 1MiB %.2f GB/s%n", (double) iters * MIB / s / 1e9);
            }
            default -> {
                ping.putLong(0, iters);
                long t0 = System.nanoTime();
                await(w, ep.sendTaggedNonBlocking(pingAddr, 8, 4, null));
                UcpRequest[] window = new UcpRequest[16];
                for (int i = 0; i < iters; i++) {
                    if (window[i % 16] != null) {
                        await(w, window[i % 16]);
                    }
                    window[i % 16] = ep.sendTaggedNonBlocking(bigAddr, MIB, 5, null);
                }
                await(w, w.recvTaggedNonBlocking(pingAddr, 8, 4, -1L, null));
                double s = (System.nanoTime() - t0) / 1e9;
                System.out.printf("raw-jucx tag 1MiB one-way %.2f GB/s%n", (double) iters * MIB / s / 1e9);
            }
        }
        await(w, ep.sendTaggedNonBlocking(pingAddr, 8, 9, null));
        rkey.close();
        await(w, ep.closeNonBlockingFlush());
    }
}
