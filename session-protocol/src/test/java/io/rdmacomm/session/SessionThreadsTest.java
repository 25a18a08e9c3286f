package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Session threads: the first ones platform threads, the rest virtual where that is safe (JDK 24+); all of one kind
 * when asked.
 */
@Timeout(30)
class SessionThreadsTest {
    @AfterEach
    void clearProperty() {
        System.clearProperty(SessionThreads.PROPERTY);
    }

    @Test
    void virtualFromJdk24PlatformBefore() throws Exception {
        System.setProperty(SessionThreads.PROPERTY, "virtual");
        SessionThreads threads = SessionThreads.forThisJvm();
        boolean expected = Runtime.version().feature() >= 24;
        assertEquals(expected, threads.virtual());
        assertEquals(expected, runsOnVirtual(threads));
    }

    @Test
    void firstSessionsOnPlatformThreadsThenVirtual() throws Exception {
        System.setProperty(SessionThreads.PROPERTY, "2");
        SessionThreads threads = SessionThreads.forThisJvm();
        boolean virtualBeyond = Runtime.version().feature() >= 24;
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> held = new ArrayList<>();
        try {
            // two sessions hold the two platform threads; the third goes virtual (JDK 24+)
            for (int i = 0; i < 2; i++) {
                CompletableFuture<Boolean> seen = new CompletableFuture<>();
                Thread t = threads.newThread(() -> {
                    try {
                        seen.complete(isVirtual(Thread.currentThread()));
                        release.await();
                    } catch (Throwable e) {
                        seen.completeExceptionally(e);
                    }
                }, "servercomm-session-held");
                t.start();
                held.add(t);
                assertFalse(seen.get(10, TimeUnit.SECONDS), "session " + i + " runs on a platform thread");
            }
            assertEquals(virtualBeyond, runsOnVirtual(threads));
        } finally {
            release.countDown();
            for (Thread t : held) {
                t.join(TimeUnit.SECONDS.toMillis(10));
                assertFalse(t.isAlive());
            }
        }
        // their platform threads are free again
        assertFalse(runsOnVirtual(threads));
    }

    @Test
    void defaultStartsOnPlatformThreads() throws Exception {
        SessionThreads threads = SessionThreads.forThisJvm();
        assertEquals(Runtime.version().feature() >= 24, threads.virtual());
        assertFalse(runsOnVirtual(threads));
    }

    @Test
    void badPropertyIsNamed() {
        System.setProperty(SessionThreads.PROPERTY, "lots");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, SessionThreads::forThisJvm);
        assertTrue(e.getMessage().contains("rdmacomm.sessionThreads='lots'"), e.getMessage());
    }

    @Test
    void propertyAsksForPlatformThreads() throws Exception {
        System.setProperty(SessionThreads.PROPERTY, "platform");
        SessionThreads threads = SessionThreads.forThisJvm();
        assertFalse(threads.virtual());
        assertFalse(runsOnVirtual(threads));
    }

    /** Runs a task on a new thread; whether that thread was virtual, checked by the thread itself. */
    private static boolean runsOnVirtual(SessionThreads threads) throws Exception {
        CompletableFuture<Boolean> seen = new CompletableFuture<>();
        Thread t = threads.newThread(() -> {
            Thread me = Thread.currentThread();
            try {
                assertEquals("servercomm-session-test", me.getName());
                seen.complete(isVirtual(me));
            } catch (Throwable e) {
                seen.completeExceptionally(e);
            }
        }, "servercomm-session-test");
        t.start();
        boolean virtual = seen.get(10, TimeUnit.SECONDS);
        t.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(t.isAlive());
        return virtual;
    }

    private static boolean isVirtual(Thread t) throws ReflectiveOperationException {
        if (Runtime.version().feature() < 21) {
            return false;
        }
        Object v = Thread.class.getMethod("isVirtual").invoke(t);
        assertTrue(v instanceof Boolean);
        return (Boolean) v;
    }
}
