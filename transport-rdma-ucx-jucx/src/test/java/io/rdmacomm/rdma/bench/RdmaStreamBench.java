package io.rdmacomm.rdma.bench;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * rdma:// (or any scheme) stream figures between two processes: {@code lat} = 8 B write+sync, 8 B echoed back,
 * round trip p50; {@code bw} = 1 MiB writes from a direct buffer, 1 MiB readFully into a direct buffer, one way.
 *
 * <pre>
 *   java ... RdmaStreamBench server URI               # e.g. rdma://127.0.0.1:7000?busyPoll=1ms
 *   java ... RdmaStreamBench client URI lat|bw ITERATIONS
 * </pre>
 */
public final class RdmaStreamBench {
    private static final int MIB = 1 << 20;

    private RdmaStreamBench() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            try (Communicator server = Communicators.serve(args[1])) {
                System.out.println("LISTENING " + server.endpoint().port());
                System.out.flush();
                try (Communicator c = server.accept()) {
                    ByteBuffer mode = ByteBuffer.allocate(16);
                    c.readFully(mode);
                    long m = mode.getLong(0);
                    long iters = mode.getLong(8);
                    if (m == 1) {
                        ByteBuffer b = ByteBuffer.allocateDirect(8);
                        for (long i = 0; i < iters; i++) {
                            c.readFully(b.clear());
                            c.write(b.flip());
                            c.sync();
                        }
                    } else {
                        ByteBuffer b = ByteBuffer.allocateDirect(MIB);
                        for (long i = 0; i < iters; i++) {
                            c.readFully(b.clear());
                        }
                        c.write(ByteBuffer.allocate(1));
                        c.sync();
                    }
                    c.read(ByteBuffer.allocate(1));
                }
            }
            return;
        }
        int iters = Integer.parseInt(args[3]);
        try (Communicator c = Communicators.connect(args[1])) {
            if (args[2].equals("lat")) {
                int warm = iters / 10;
                c.write(ByteBuffer.allocate(16).putLong(1).putLong(iters + warm).flip());
                ByteBuffer b = ByteBuffer.allocateDirect(8);
                long[] rtt = new long[iters];
                for (int i = -warm; i < iters; i++) {
                    long t0 = System.nanoTime();
                    c.write(b.clear());
                    c.sync();
                    c.readFully(b.clear());
                    if (i >= 0) {
                        rtt[i] = System.nanoTime() - t0;
                    }
                }
                Arrays.sort(rtt);
                System.out.printf("%s 8B RTT p50 %.2f us p99 %.2f us%n", args[1], rtt[iters / 2] / 1e3,
                        rtt[iters * 99 / 100] / 1e3);
            } else {
                c.write(ByteBuffer.allocate(16).putLong(2).putLong(iters).flip());
                ByteBuffer b = ByteBuffer.allocateDirect(MIB);
                long t0 = System.nanoTime();
                for (int i = 0; i < iters; i++) {
                    c.write(b.clear());
                }
                c.sync();
                c.readFully(ByteBuffer.allocate(1));
                double s = (System.nanoTime() - t0) / 1e9;
                System.out.printf("%s 1MiB one-way %.2f GB/s%n", args[1], (double) iters * MIB / s / 1e9);
            }
        }
    }
}
