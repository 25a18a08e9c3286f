package io.rdmacomm.netty;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that make the blocking communicator calls no event loop may make: connect, write and sync (which
 * block on back-pressure), close (which may deliver what is left). A thread per call in progress, kept a minute
 * after its last; daemon threads, so they never hold a JVM up.
 */
final class Blocking {

    private static final AtomicInteger COUNT = new AtomicInteger();

    static final ExecutorService EXECUTOR = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
            new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "rdmacomm-netty-blocking-" + COUNT.incrementAndGet());
                t.setDaemon(true);
                return t;
            });

    private Blocking() {
    }
}
