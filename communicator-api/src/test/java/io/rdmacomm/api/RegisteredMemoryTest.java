package io.rdmacomm.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class RegisteredMemoryTest {
    /** A transport name of this test only: other tests of the JVM count under their own names. */
    private final String name = "test-" + UUID.randomUUID();

    @Test
    void countsRegionsAndBytesUntilReleased() {
        RegisteredMemory.Counter c = RegisteredMemory.counter(name);
        assertEquals(RegisteredMemory.Usage.NONE, c.usage());
        c.registered(4096);
        c.registered(100);
        assertEquals(new RegisteredMemory.Usage(2, 4196), c.usage());
        assertEquals(new RegisteredMemory.Usage(2, 4196), RegisteredMemory.byTransport().get(name));
        c.released(4096);
        assertEquals(new RegisteredMemory.Usage(1, 100), c.usage());
        c.released(100);
        assertEquals(RegisteredMemory.Usage.NONE, c.usage());
    }

    @Test
    void oneCounterPerNameAndTheTotalSumsThemAll() {
        RegisteredMemory.Counter a = RegisteredMemory.counter(name);
        assertSame(a, RegisteredMemory.counter(name));
        RegisteredMemory.Counter b = RegisteredMemory.counter(name + "-b");
        RegisteredMemory.Usage before = RegisteredMemory.total();
        a.registered(10);
        b.registered(32);
        b.registered(1);
        RegisteredMemory.Usage during = RegisteredMemory.total();
        assertEquals(before.regions() + 3, during.regions());
        assertEquals(before.bytes() + 43, during.bytes());
        a.released(10);
        b.released(32);
        b.released(1);
        assertEquals(before, RegisteredMemory.total());
    }

    @Test
    void concurrentRegistrationsAndReleasesBalance() throws Exception {
        RegisteredMemory.Counter c = RegisteredMemory.counter(name);
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            long length = 1L << (10 + t);
            threads.add(new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 10_000; i++) {
                    c.registered(length);
                    c.released(length);
                }
                c.registered(length);
            }));
        }
        threads.forEach(Thread::start);
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(new RegisteredMemory.Usage(4, 1024 + 2048 + 4096 + 8192), c.usage());
    }
}
