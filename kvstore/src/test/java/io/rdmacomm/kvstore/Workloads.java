package io.rdmacomm.kvstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.zip.CRC32C;

/** Workloads that the in-process and the cross-process tests run alike. */
final class Workloads {
    /** Opens a client session for one thread. */
    interface Connector {
        KvClient connect(String name) throws IOException;
    }

    /** What a concurrent run saw. */
    record Counts(long gets, long puts, long checked) {
    }

    private Workloads() {
    }

    static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * A value that proves its own integrity: u64 sequence, u32 writer, filler bytes drawn from both, and a CRC32C
     * of everything before it in the last 4 bytes. A value torn between two writes, or cut to another length,
     * fails the check.
     */
    static ByteBuffer value(long sequence, int writer, int size) {
        ByteBuffer v = ByteBuffer.allocate(Math.max(size, 16));
        v.putLong(sequence).putInt(writer);
        SplittableRandom filler = new SplittableRandom(sequence * 31 + writer);
        while (v.remaining() > 4) {
            v.put((byte) filler.nextInt());
        }
        CRC32C crc = new CRC32C();
        crc.update(v.array(), 0, v.capacity() - 4);
        v.putInt((int) crc.getValue());
        return v.flip();
    }

    /** The value's sequence number; fails the test if the value is torn. */
    static long check(ByteBuffer got, String what) {
        ByteBuffer v = got.duplicate();
        if (v.remaining() < 16) {
            fail(what + ": " + v.remaining() + " bytes, too short to be any value written");
        }
        byte[] bytes = new byte[v.remaining()];
        v.get(bytes);
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        int stored = ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt();
        if (stored != (int) crc.getValue()) {
            fail(what + ": torn or mixed value of " + bytes.length + " bytes (checksum mismatch)");
        }
        ByteBuffer header = ByteBuffer.wrap(bytes);
        long sequence = header.getLong();
        int writer = header.getInt();
        assertEquals(value(sequence, writer, bytes.length), ByteBuffer.wrap(bytes), what + ": content");
        return sequence;
    }

    /**
     * Writers overwrite keys with checksummed values of varying sizes while readers GET them; every GET must be
     * intact. Keys [0, keys/2) are written by every writer (overwrites of the same key race); keys [keys/2, keys)
     * each by one writer, in increasing sequence, so a reader also checks that a GET returns a value at least as
     * new as the last PUT acknowledged before the GET began.
     */
    static Counts concurrentOverwrites(Connector connector, int writers, int readers, int keys, int opsPerThread,
            int minSize, int maxSize) throws Exception {
        AtomicLongArray acknowledged = new AtomicLongArray(keys);
        AtomicLong sequences = new AtomicLong();
        try (KvClient setup = connector.connect("setup")) {
            for (int k = 0; k < keys; k++) {
                long s = sequences.incrementAndGet();
                setup.put(key(k), value(s, 0, minSize));
                acknowledged.set(k, s);
            }
        }
        ExecutorService threads = Executors.newFixedThreadPool(writers + readers);
        try {
            List<Future<long[]>> results = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                results.add(threads.submit(() -> {
                    SplittableRandom random = new SplittableRandom(writer);
                    try (KvClient kv = connector.connect("writer " + writer)) {
                        for (int i = 0; i < opsPerThread; i++) {
                            int k = random.nextInt(keys);
                            boolean owned = k >= keys / 2;
                            if (owned && k % writers != writer) {
                                k = random.nextInt(keys / 2);
                                owned = false;
                            }
                            long s = sequences.incrementAndGet();
                            kv.put(key(k), value(s, writer, random.nextInt(minSize, maxSize + 1)));
                            if (owned) {
                                acknowledged.set(k, s);
                            }
                        }
                    }
                    return new long[] {0, opsPerThread, 0};
                }));
            }
            for (int r = 0; r < readers; r++) {
                int reader = r;
                results.add(threads.submit(() -> {
                    SplittableRandom random = new SplittableRandom(100 + reader);
                    long checked = 0;
                    try (KvClient kv = connector.connect("reader " + reader)) {
                        for (int i = 0; i < opsPerThread; i++) {
                            int k = random.nextInt(keys);
                            long before = acknowledged.get(k);
                            long got = check(kv.get(key(k)), "GET of key " + k);
                            if (k >= keys / 2) {
                                assertTrue(got >= before, "GET of key " + k + " returned sequence " + got
                                        + ", older than the PUT of " + before + " acknowledged before it began");
                                checked++;
                            }
                        }
                    }
                    return new long[] {opsPerThread, 0, checked};
                }));
            }
            long gets = 0;
            long puts = 0;
            long checked = 0;
            for (Future<long[]> f : results) {
                long[] c = f.get(120, TimeUnit.SECONDS);
                gets += c[0];
                puts += c[1];
                checked += c[2];
            }
            return new Counts(gets, puts, checked);
        } finally {
            threads.shutdownNow();
        }
    }
}
