package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Session threads are virtual exactly where that is safe (JDK 24+), and platform threads when asked. */
@Timeout(30)
class SessionThreadsTest {
    @AfterEach
    void clearProperty() {
        System.clearProperty(SessionThreads.PROPERTY);
    }

    @Test
    void virtualFromJdk24PlatformBefore() throws Exception {
        SessionThreads threads = SessionThreads.forThisJvm();
        boolean expected = Runtime.version().feature() >= 24;
        assertEquals(expected, threads.virtual());
        assertEquals(expected, runsOnVirtual(threads));
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
