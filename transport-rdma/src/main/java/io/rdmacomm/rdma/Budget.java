package io.rdmacomm.rdma;

import java.util.concurrent.atomic.AtomicLong;

/** The registered bytes of one connection against its {@code maxRegistered} limit. */
final class Budget {
    private final long limit;
    private final AtomicLong used = new AtomicLong();

    Budget(long limit) {
        this.limit = limit;
    }

    boolean tryReserve(long bytes) {
        while (true) {
            long u = used.get();
            if (u + bytes > limit) {
                return false;
            }
            if (used.compareAndSet(u, u + bytes)) {
                return true;
            }
        }
    }

    void release(long bytes) {
        used.addAndGet(-bytes);
    }

    long used() {
        return used.get();
    }

    long limit() {
        return limit;
    }
}
