package io.rdmacomm.bench;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Many concurrent clients of one servercomm (bench/clients): each connects, opens an ECHO session, and sends COUNT
 * messages of SIZE bytes whose echo it verifies byte for byte. All clients are connected before the first sends.
 * Prints one JSON line: clients, verified, failed (with the first failure) and seconds. Exit status 0 only if every
 * client verified every message.
 *
 * <p>Usage: {@code ConcurrentClients ENDPOINT CLIENTS SIZE COUNT TIMEOUT_SECONDS}
 */
public final class ConcurrentClients {
    private ConcurrentClients() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            throw new IllegalArgumentException("usage: ConcurrentClients ENDPOINT CLIENTS SIZE COUNT TIMEOUT_SECONDS");
        }
        String endpoint = args[0];
        int clients = Integer.parseInt(args[1]);
        int size = Integer.parseInt(args[2]);
        int count = Integer.parseInt(args[3]);
        long timeoutSeconds = Long.parseLong(args[4]);
        CountDownLatch connected = new CountDownLatch(clients);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        long start = System.nanoTime();
        List<Future<Void>> runs = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            int id = i;
            runs.add(pool.submit(() -> {
                run(endpoint, id, size, count, connected, timeoutSeconds);
                return null;
            }));
        }
        int verified = 0;
        String firstFailure = null;
        for (Future<Void> f : runs) {
            try {
                f.get(timeoutSeconds, TimeUnit.SECONDS);
                verified++;
            } catch (Exception e) {
                if (firstFailure == null) {
                    firstFailure = String.valueOf(e.getCause() != null ? e.getCause() : e);
                }
            }
        }
        pool.shutdownNow();
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.println(String.format(Locale.ROOT,
                "{\"clients\":%d,\"verified\":%d,\"failed\":%d,\"seconds\":%.3f,\"first_failure\":%s}", clients,
                verified, clients - verified, seconds, firstFailure == null ? "null" : Json.write(firstFailure)));
        System.exit(verified == clients ? 0 : 1);
    }

    private static void run(String endpoint, int id, int size, int count, CountDownLatch connected,
            long timeoutSeconds) throws Exception {
        boolean counted = false;
        try (Communicator c = Communicators.connect(endpoint)) {
            SessionClient.open(c, SessionRequest.echo());
            connected.countDown();
            counted = true;
            if (!connected.await(timeoutSeconds, TimeUnit.SECONDS)) {
                throw new IOException("client " + id + ": not all clients connected within " + timeoutSeconds + " s");
            }
            ByteBuffer out = ByteBuffer.allocateDirect(size);
            ByteBuffer in = ByteBuffer.allocateDirect(size);
            for (int m = 0; m < count; m++) {
                for (int i = 0; i < size; i++) {
                    out.put(i, (byte) (id * 31 + m * 7 + i));
                }
                out.clear();
                c.write(out);
                c.sync();
                in.clear();
                c.readFully(in);
                if (!in.flip().equals(out.flip())) {
                    throw new IOException("client " + id + ": message " + m + " came back different");
                }
            }
        } finally {
            if (!counted) {
                // a client that failed to connect must not hold the others back until the timeout
                connected.countDown();
            }
        }
    }
}
