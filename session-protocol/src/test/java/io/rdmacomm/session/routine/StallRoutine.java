package io.rdmacomm.session.routine;

import java.util.concurrent.CountDownLatch;

/** A test plugin that never finishes on its own: it waits until its thread is interrupted, and records that. */
public final class StallRoutine implements Routine {
    /** Counted down each time a call of this routine was interrupted. */
    public static volatile CountDownLatch interrupted = new CountDownLatch(1);

    @Override
    public String name() {
        return "stall";
    }

    @Override
    public String description() {
        return "waits until interrupted";
    }

    @Override
    public byte[] run(byte[] input) throws RoutineException {
        try {
            new CountDownLatch(1).await();
            throw new AssertionError("unreachable: nobody counts this latch down");
        } catch (InterruptedException e) {
            interrupted.countDown();
            throw new RoutineException("stall: interrupted");
        }
    }
}
