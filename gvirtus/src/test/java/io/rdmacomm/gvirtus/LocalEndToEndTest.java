package io.rdmacomm.gvirtus;

import java.util.concurrent.atomic.AtomicInteger;

/** {@link EndToEndTest} over {@code local://}, the in-process transport. */
class LocalEndToEndTest extends EndToEndTest {
    private static final AtomicInteger NAMES = new AtomicInteger();

    @Override
    String serverUri() {
        return "local://gvirtus-e2e-" + NAMES.incrementAndGet();
    }
}
