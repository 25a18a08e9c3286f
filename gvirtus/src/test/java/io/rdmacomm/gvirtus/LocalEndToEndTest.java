package io.rdmacomm.gvirtus;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;

/** {@link EndToEndTest} over {@code local://}, the in-process transport. */
@Timeout(60)
class LocalEndToEndTest extends EndToEndTest {
    private static final AtomicInteger NAMES = new AtomicInteger();

    @Override
    String serverUri() {
        return "local://gvirtus-e2e-" + NAMES.incrementAndGet();
    }
}
