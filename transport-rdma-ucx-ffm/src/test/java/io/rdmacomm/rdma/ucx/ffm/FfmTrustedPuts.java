package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * For the oneSided=trusted kits: after the class, this process must have issued puts ({@link FfmChannel#PUTS}),
 * so the kit ran the one-sided path (put, flush, notification) and not the active-message writes of the default.
 */
final class FfmTrustedPuts implements BeforeAllCallback, AfterAllCallback {
    private static final Logger LOG = LoggerFactory.getLogger(FfmTrustedPuts.class);
    private long before;

    @Override
    public void beforeAll(ExtensionContext context) {
        before = FfmChannel.PUTS.sum();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getExecutionException().isPresent()) {
            return;
        }
        long puts = FfmChannel.PUTS.sum() - before;
        LOG.info("{}: {} puts in this process (UCX_TLS={})", context.getDisplayName(), puts, System.getenv("UCX_TLS"));
        assertTrue(puts > 0 || skipped(context), context.getDisplayName() + " issued no put with oneSided=trusted");
    }

    /** A class the environment skips (the tcp kits outside the ucx-tcp execution) runs nothing. */
    private static boolean skipped(ExtensionContext context) {
        String name = context.getRequiredTestClass().getSimpleName();
        return name.startsWith("FfmTcp") && !"tcp".equals(System.getenv("UCX_TLS"));
    }
}
