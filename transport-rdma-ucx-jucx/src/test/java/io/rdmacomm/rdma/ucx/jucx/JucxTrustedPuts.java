package io.rdmacomm.rdma.ucx.jucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * For the oneSided=trusted kits: after the class, this process must have issued puts ({@link JucxRequests#PUTS}),
 * so the kit ran the one-sided path (put, flush, notification) and not the active-message writes of the default.
 */
final class JucxTrustedPuts implements BeforeAllCallback, AfterAllCallback {
    private static final Logger LOG = LoggerFactory.getLogger(JucxTrustedPuts.class);
    private long before;

    @Override
    public void beforeAll(ExtensionContext context) {
        before = JucxRequests.PUTS.sum();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getExecutionException().isPresent()) {
            return;
        }
        long puts = JucxRequests.PUTS.sum() - before;
        LOG.info("{}: {} puts in this process (UCX_TLS={})", context.getDisplayName(), puts, System.getenv("UCX_TLS"));
        assertTrue(puts > 0 || skipped(context), context.getDisplayName() + " issued no put with oneSided=trusted");
    }

    /** A class the environment skips (the tcp kits outside the ucx-tcp execution) runs nothing. */
    private static boolean skipped(ExtensionContext context) {
        String name = context.getRequiredTestClass().getSimpleName();
        return name.startsWith("JucxTcp") && !"tcp".equals(System.getenv("UCX_TLS"));
    }
}
