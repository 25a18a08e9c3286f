package io.rdmacomm.session;

import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the threads that serve sessions. A session spends its life blocked in a read, so a server with thousands of
 * sessions needs thousands of threads, which virtual threads make cheap; but a virtual thread's blocking read is
 * woken through the JDK's poller and scheduler, two thread hand-offs where a platform thread takes one, which about
 * doubles a tcp:// round trip (8 B: 27 against 53 µs on JDK 25). So, on JDK 24 and later, the first
 * {@value #DEFAULT_PLATFORM} sessions at a time run on platform threads and any beyond on virtual threads: a server
 * with few clients answers as fast as a thread per client can, one with thousands holds them at a few KiB each.
 * Before JDK 24 a virtual thread blocked inside {@code synchronized} pins its carrier (one per core), and the
 * transports and handlers block inside {@code synchronized} in places (GroupHandler's forming groups, tcp://'s
 * progress hand-over), so a few such sessions could stall all others: platform threads only there.
 *
 * <p>The system property {@code rdmacomm.sessionThreads} chooses: {@code platform} (every session, any JDK),
 * {@code virtual} (every session, JDK 24+), or a number: how many sessions at a time run on platform threads before
 * the rest go virtual (default {@value #DEFAULT_PLATFORM}).
 *
 * <p>Looked up at run time (the project is compiled for JDK 17, which has no {@code Thread.ofVirtual}).
 */
final class SessionThreads {
    private static final Logger LOG = LoggerFactory.getLogger(SessionThreads.class);
    static final String PROPERTY = "rdmacomm.sessionThreads";
    static final int DEFAULT_PLATFORM = 32;
    private static final int FIRST_WITHOUT_PINNING = 24;

    private final ThreadFactory virtual;
    /** Platform threads still to be had before sessions go virtual; null: every session on a platform thread. */
    private final Semaphore platform;

    private SessionThreads(ThreadFactory virtual, int platformThreads) {
        this.virtual = virtual;
        this.platform = virtual == null ? null : new Semaphore(platformThreads);
    }

    /**
     * Virtual threads beyond the first platform ones where the running JDK has them without pinning in
     * {@code synchronized}, as the property says.
     *
     * @throws IllegalArgumentException if the property is neither platform, virtual nor a whole number
     */
    static SessionThreads forThisJvm() {
        String asked = System.getProperty(PROPERTY, "").trim();
        int platformThreads;
        if (asked.isEmpty()) {
            platformThreads = DEFAULT_PLATFORM;
        } else if (asked.equals("platform")) {
            return new SessionThreads(null, 0);
        } else if (asked.equals("virtual")) {
            platformThreads = 0;
        } else {
            try {
                platformThreads = Integer.parseInt(asked);
            } catch (NumberFormatException e) {
                platformThreads = -1;
            }
            if (platformThreads < 0) {
                throw new IllegalArgumentException("bad -D" + PROPERTY + "='" + asked + "': expected platform,"
                        + " virtual, or how many sessions at a time run on platform threads (0 or more)");
            }
        }
        if (Runtime.version().feature() < FIRST_WITHOUT_PINNING) {
            return new SessionThreads(null, 0);
        }
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            return new SessionThreads((ThreadFactory) Class.forName("java.lang.Thread$Builder")
                    .getMethod("factory").invoke(builder), platformThreads);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("virtual threads unavailable on JDK {} ({}); sessions run on platform threads",
                    Runtime.version(), e.toString());
            return new SessionThreads(null, 0);
        }
    }

    /** Whether sessions beyond the first platform threads run on virtual threads. */
    boolean virtual() {
        return virtual != null;
    }

    /**
     * An unstarted thread named {@code name} that runs {@code task}: a platform thread while fewer than the
     * platform allowance run sessions, else a virtual one.
     */
    Thread newThread(Runnable task, String name) {
        if (virtual == null) {
            return new Thread(task, name);
        }
        if (platform.tryAcquire()) {
            return new Thread(() -> {
                try {
                    task.run();
                } finally {
                    platform.release();
                }
            }, name);
        }
        Thread t = virtual.newThread(task);
        t.setName(name);
        return t;
    }
}
