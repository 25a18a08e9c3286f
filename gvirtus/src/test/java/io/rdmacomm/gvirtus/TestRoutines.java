package io.rdmacomm.gvirtus;

import java.util.concurrent.CountDownLatch;

/** Routines for tests. */
final class TestRoutines {
    private TestRoutines() {
    }

    interface Body {
        GVirtuSResult call(GVirtuSBuffer input, GVirtuSRoutine.Context context) throws Exception;
    }

    static GVirtuSRoutine of(String name, Body body) {
        return new GVirtuSRoutine() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public GVirtuSResult call(GVirtuSBuffer input, Context context) throws Exception {
                return body.call(input, context);
            }
        };
    }

    /** Throws, as a routine with a bug would. */
    static GVirtuSRoutine boom() {
        return of("boom", (in, ctx) -> {
            throw new IllegalStateException("deliberate failure in a test routine");
        });
    }

    /** Counts its calls in the session's attributes and returns the count (an int). */
    static GVirtuSRoutine counter() {
        return of("count", (in, ctx) -> {
            int n = (Integer) ctx.attributes().merge("count", 1, (a, b) -> (Integer) a + (Integer) b);
            return GVirtuSResult.ok(GVirtuSBuffer.create().addInt(n));
        });
    }

    /** Counts {@code entered} down, then waits (interruptibly) for {@code release}. */
    static GVirtuSRoutine block(CountDownLatch entered, CountDownLatch release) {
        return of("block", (in, ctx) -> {
            entered.countDown();
            release.await();
            return GVirtuSResult.ok(new byte[0]);
        });
    }
}
