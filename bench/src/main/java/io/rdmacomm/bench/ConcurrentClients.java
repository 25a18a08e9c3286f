package io.rdmacomm.bench;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.clientcomm.bench.Json;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionRequest;
import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Many concurrent clients of one server from few threads (bench/clients, one process of several): THREADS threads
 * each connect their share of CLIENTS one after another (opening an ECHO session with servercomm), so all CLIENTS
 * are connected at once; then each thread sends COUNT messages of SIZE bytes on every connection it holds and verifies
 * every echo byte for byte. An endpoint {@code raw://host:port} is the raw Java NIO baseline instead: a plain
 * {@code SocketChannel} per client against an accept-and-echo server ({@link NioAcceptEcho}), no handshake, no session;
 * its connect ends with the echo of 8 bytes, so that on both sides a client counts as connected once the server's
 * application has answered it (ours: the handshake and the session's opening).
 *
 * <p>Prints one JSON line when every client has tried to connect ({@code "phase":"connected"}, with the wall-clock
 * times the first connect started and the last ended, so a script can add up several processes, and the process's
 * CPU time over that phase), and with
 * {@code --hold} then waits for a line on standard input before it sends (so a script can read the server at its
 * peak, all clients of all processes connected). The last line: clients, connected, verified, failed (with the first
 * failure), connect and total seconds. Exit status 0 only if every client verified every message.
 *
 * <p>With {@code --warmup=N}, first runs the timed phase's pattern untimed: N connections in rounds of at most
 * CLIENTS, each round opened over the threads and held, one echo checked on each, then all closed (so the code that
 * serves many connections at once is warm too, not only that of one after another); prints
 * {@code "phase":"warmed"} and (with {@code --hold}) waits for a line on standard input, so that several processes
 * start the timed phase together with warm code on both sides.
 *
 * <p>Usage: {@code ConcurrentClients ENDPOINT CLIENTS SIZE COUNT TIMEOUT_SECONDS [THREADS] [--hold] [--warmup=N]}
 */
public final class ConcurrentClients {
    private static final int DEFAULT_THREADS = 4;

    private ConcurrentClients() {
    }

    /** One client's connection: ours or the raw baseline's. */
    private interface Client extends AutoCloseable {
        void write(ByteBuffer b) throws IOException;

        void readFully(ByteBuffer b) throws IOException;

        @Override
        void close();
    }

    public static void main(String[] args) throws Exception {
        List<String> a = new ArrayList<>(List.of(args));
        boolean hold = a.remove("--hold");
        int warmup = 0;
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i).startsWith("--warmup=")) {
                warmup = Integer.parseInt(a.remove(i).substring("--warmup=".length()));
                break;
            }
        }
        if (a.size() != 5 && a.size() != 6) {
            throw new IllegalArgumentException("usage: ConcurrentClients ENDPOINT CLIENTS SIZE COUNT TIMEOUT_SECONDS"
                    + " [THREADS] [--hold] [--warmup=N]");
        }
        String endpoint = a.get(0);
        int clients = Integer.parseInt(a.get(1));
        int size = Integer.parseInt(a.get(2));
        int count = Integer.parseInt(a.get(3));
        long timeoutSeconds = Long.parseLong(a.get(4));
        int threads = Math.max(1, Math.min(clients, a.size() == 6 ? Integer.parseInt(a.get(5)) : DEFAULT_THREADS));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);

        Client[] held = new Client[clients];
        AtomicReference<String> firstFailure = new AtomicReference<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> phase = new ArrayList<>();
        AtomicInteger warmFailed = new AtomicInteger();
        AtomicReference<String> warmFirstFailure = new AtomicReference<>();
        if (warmup > 0) {
            // untimed: the timed phase's pattern, WARMUP connections in rounds of at most CLIENTS: each round opens
            // its connections over the threads and holds them all, checks one echo on each and closes them, so the
            // timed phase meets code warmed the way it will run (a server holding many connections at once);
            // with --hold, then waits for a go line (all processes warm)
            for (int done = 0; done < warmup && System.nanoTime() - deadline < 0; ) {
                Client[] round = new Client[Math.min(clients, warmup - done)];
                AtomicReference<String> roundFailure = new AtomicReference<>();
                openAll(pool, round, endpoint, threads, deadline, roundFailure);
                boolean[] ok = new boolean[round.length];
                phase.clear();
                for (int t = 0; t < threads; t++) {
                    int first = t;
                    phase.add(pool.submit(() -> echoAll(round, ok, first, threads, size, 1, roundFailure)));
                }
                awaitAll(phase, deadline);
                phase.clear();
                for (int i = 0; i < round.length; i++) {
                    if (round[i] != null) {
                        round[i].close();
                    }
                    if (!ok[i]) {
                        warmFailed.incrementAndGet();
                    }
                }
                if (roundFailure.get() != null) {
                    warmFirstFailure.compareAndSet(null, "warm-up: " + roundFailure.get());
                }
                done += round.length;
            }
            System.out.println(String.format(Locale.ROOT, "{\"phase\":\"warmed\",\"warmup\":%d,\"failed\":%d}",
                    warmup, warmFailed.get()));
            System.out.flush();
            if (hold) {
                awaitGo(deadline);
            }
        }
        long startCpu = processCpuNanos();
        long start = System.nanoTime();
        long startMillis = System.currentTimeMillis();
        openAll(pool, held, endpoint, threads, deadline, firstFailure);
        long connectNanos = System.nanoTime() - start;
        long endMillis = System.currentTimeMillis();
        long connectCpuNanos = processCpuNanos() - startCpu;
        int connected = 0;
        for (Client c : held) {
            connected += c == null ? 0 : 1;
        }
        System.out.println(String.format(Locale.ROOT, "{\"phase\":\"connected\",\"clients\":%d,\"connected\":%d,"
                + "\"connect_seconds\":%.3f,\"connect_start_ms\":%d,\"connect_end_ms\":%d,\"connect_cpu_ms\":%d}",
                clients, connected, connectNanos / 1e9, startMillis, endMillis, connectCpuNanos / 1_000_000));
        System.out.flush();
        if (hold) {
            awaitGo(deadline);
        }

        boolean[] verified = new boolean[clients];
        long echoStartMillis = System.currentTimeMillis();
        phase.clear();
        for (int t = 0; t < threads; t++) {
            int first = t;
            phase.add(pool.submit(() -> echoAll(held, verified, first, threads, size, count, firstFailure)));
        }
        awaitAll(phase, deadline);
        long echoEndMillis = System.currentTimeMillis();
        pool.shutdownNow();
        for (Client c : held) {
            if (c != null) {
                c.close();
            }
        }
        int ok = 0;
        for (boolean v : verified) {
            ok += v ? 1 : 0;
        }
        String failure = firstFailure.get();
        if (failure == null && ok < clients) {
            failure = (clients - ok) + " clients did not finish within " + timeoutSeconds + " s";
        }
        if (failure == null && warmFailed.get() > 0) {
            failure = warmFailed.get() + " of " + warmup + " warm-up connections failed, the first: "
                    + warmFirstFailure.get();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.println(String.format(Locale.ROOT,
                "{\"clients\":%d,\"threads\":%d,\"connected\":%d,\"verified\":%d,\"failed\":%d,\"connect_seconds\":%.3f,"
                        + "\"seconds\":%.3f,\"echo_start_ms\":%d,\"echo_end_ms\":%d,\"first_failure\":%s}", clients,
                threads, connected, ok, clients - ok, connectNanos / 1e9, seconds, echoStartMillis, echoEndMillis,
                failure == null ? "null" : Json.write(failure)));
        System.out.flush();
        System.exit(ok == clients && warmFailed.get() == 0 ? 0 : 1);
    }

    /**
     * Opens {@code held.length} connections over the threads, each thread its share one after another; a failed
     * one stays null, the first failure's cause in {@code firstFailure}.
     */
    private static void openAll(ExecutorService pool, Client[] held, String endpoint, int threads, long deadline,
            AtomicReference<String> firstFailure) throws InterruptedException {
        List<Future<?>> phase = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t;
            phase.add(pool.submit(() -> {
                for (int i = first; i < held.length && System.nanoTime() - deadline < 0; i += threads) {
                    try {
                        held[i] = open(endpoint);
                    } catch (Exception e) {
                        firstFailure.compareAndSet(null, "client " + i + " connecting: " + e);
                    }
                }
            }));
        }
        awaitAll(phase, deadline);
    }

    /**
     * Sends message m on every connection of this thread's share, then reads and checks every echo, COUNT times; a
     * connection that fails is closed and left out from then on.
     */
    private static void echoAll(Client[] held, boolean[] verified, int first, int stride, int size, int count,
            AtomicReference<String> firstFailure) {
        ByteBuffer out = ByteBuffer.allocateDirect(size);
        ByteBuffer in = ByteBuffer.allocateDirect(size);
        boolean[] failed = new boolean[held.length];
        for (int m = 0; m < count; m++) {
            for (int i = first; i < held.length; i += stride) {
                if (held[i] == null || failed[i]) {
                    continue;
                }
                try {
                    fill(out, i, m);
                    held[i].write(out);
                } catch (Exception e) {
                    failed[i] = fail(held[i], firstFailure, "client " + i + " writing message " + m + ": " + e);
                }
            }
            for (int i = first; i < held.length; i += stride) {
                if (held[i] == null || failed[i]) {
                    continue;
                }
                try {
                    fill(out, i, m);
                    in.clear();
                    held[i].readFully(in);
                    if (!in.flip().equals(out)) {
                        throw new IOException("the echo of message " + m + " came back different");
                    }
                } catch (Exception e) {
                    failed[i] = fail(held[i], firstFailure, "client " + i + ": " + e);
                }
            }
        }
        for (int i = first; i < held.length; i += stride) {
            verified[i] = held[i] != null && !failed[i];
        }
    }

    private static boolean fail(Client c, AtomicReference<String> firstFailure, String why) {
        firstFailure.compareAndSet(null, why);
        c.close();
        return true;
    }

    private static void fill(ByteBuffer b, int client, int message) {
        b.clear();
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) (client * 31 + message * 7 + i));
        }
    }

    private static void awaitAll(List<Future<?>> futures, long deadline) throws InterruptedException {
        for (Future<?> f : futures) {
            try {
                f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                // a thread still going at the deadline, or failed: its clients count as not verified
                f.cancel(true);
            }
        }
    }

    /** Standard input, read a line at a time by {@link #awaitGo} (one reader, so no line is buffered and lost). */
    private static final BufferedReader STDIN =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

    /** Waits for a line on standard input, at most until the deadline. */
    private static void awaitGo(long deadline) throws InterruptedException {
        Thread reader = new Thread(() -> {
            try {
                STDIN.readLine();
            } catch (IOException ignored) {
                // end of input is a go as well
            }
        }, "clients-await-go");
        reader.setDaemon(true);
        reader.start();
        reader.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }

    private static Client open(String endpoint) throws IOException {
        if (endpoint.startsWith("raw://")) {
            return RawEcho.connect(Endpoint.parse("tcp://" + endpoint.substring("raw://".length())));
        }
        Communicator c = Communicators.open(endpoint);
        try {
            SessionClient.connect(c, SessionRequest.echo());
        } catch (IOException | RuntimeException e) {
            try {
                c.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new Client() {
            @Override
            public void write(ByteBuffer b) throws IOException {
                c.write(b);
                c.sync();
            }

            @Override
            public void readFully(ByteBuffer b) throws IOException {
                c.readFully(b);
            }

            @Override
            public void close() {
                try {
                    c.close();
                } catch (IOException ignored) {
                    // closing
                }
            }
        };
    }

    /**
     * A blocking {@code SocketChannel} with TCP_NODELAY: the raw baseline's client. Connecting includes the echo of
     * {@value #FIRST_ECHO_BYTES} bytes.
     */
    private record RawEcho(SocketChannel channel) implements Client {
        static final int FIRST_ECHO_BYTES = 8;

        static RawEcho connect(Endpoint e) throws IOException {
            SocketChannel ch = SocketChannel.open();
            try {
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ch.socket().connect(new InetSocketAddress(e.host(), e.port()),
                        (int) e.duration(io.rdmacomm.api.EndpointOption.CONNECT_TIMEOUT).toMillis());
                RawEcho r = new RawEcho(ch);
                // the server's application answers once, as ours does to the handshake: a connect alone completes
                // in the kernel's listen queue before the server has accepted anything
                ByteBuffer first = ByteBuffer.allocate(FIRST_ECHO_BYTES);
                r.write(first);
                r.readFully(first.clear());
                return r;
            } catch (IOException | RuntimeException ex) {
                ch.close();
                throw ex;
            }
        }

        @Override
        public void write(ByteBuffer b) throws IOException {
            while (b.hasRemaining()) {
                channel.write(b);
            }
        }

        @Override
        public void readFully(ByteBuffer b) throws IOException {
            while (b.hasRemaining()) {
                if (channel.read(b) < 0) {
                    throw new EOFException("the raw echo server closed the connection");
                }
            }
        }

        @Override
        public void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    /** CPU time of this process so far (all threads, user and system), in nanoseconds; -1 where unknown. */
    private static long processCpuNanos() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
    }
}
