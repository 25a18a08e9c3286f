package io.rdmacomm.session;

import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the threads that serve sessions: virtual threads on JDK 24 and later, platform threads before. A session
 * spends its life blocked in a read, so a server with hundreds of sessions needs hundreds of threads, which virtual
 * threads make cheap. Before JDK 24 a virtual thread blocked inside {@code synchronized} pins its carrier (one per
 * core), and the transports and handlers block inside {@code synchronized} in places (GroupHandler's forming
 * groups, tcp://'s progress hand-over), so a few such sessions could stall all others: platform threads there.
 * The system property {@code rdmacomm.sessionThreads=platform} asks for platform threads on any JDK.
 *
 * <p>Looked up at run time (the project is compiled for JDK 17, which has no {@code Thread.ofVirtual}).
 */
final class SessionThreads {
    private static final Logger LOG = LoggerFactory.getLogger(SessionThreads.class);
    static final String PROPERTY = "rdmacomm.sessionThreads";
    private static final int FIRST_WITHOUT_PINNING = 24;

    private final ThreadFactory virtual;

    private SessionThreads(ThreadFactory virtual) {
        this.virtual = virtual;
    }

    /** Virtual threads where the running JDK has them without pinning in {@code synchronized}, unless disabled. */
    static SessionThreads forThisJvm() {
        if ("platform".equals(System.getProperty(PROPERTY)) || Runtime.version().feature() < FIRST_WITHOUT_PINNING) {
            return new SessionThreads(null);
        }
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            return new SessionThreads((ThreadFactory) Class.forName("java.lang.Thread$Builder")
                    .getMethod("factory").invoke(builder));
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("virtual threads unavailable on JDK {} ({}); sessions run on platform threads",
                    Runtime.version(), e.toString());
            return new SessionThreads(null);
        }
    }

    /** Whether sessions run on virtual threads. */
    boolean virtual() {
        return virtual != null;
    }

    /** An unstarted thread named {@code name} that runs {@code task}. */
    Thread newThread(Runnable task, String name) {
        if (virtual == null) {
            return new Thread(task, name);
        }
        Thread t = virtual.newThread(task);
        t.setName(name);
        return t;
    }
}
