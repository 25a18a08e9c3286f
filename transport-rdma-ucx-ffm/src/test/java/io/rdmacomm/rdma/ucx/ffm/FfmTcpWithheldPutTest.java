package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.ucx.ffm.UcpContext;
import io.rdmacomm.ucx.ffm.UcpEndpoint;
import io.rdmacomm.ucx.ffm.UcpWorker;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs with UCX_TLS=tcp: the configuration a node that withholds one-sided access creates its context with
 * ({@link UcxTransports#contextConfig(String, boolean)}) really switches tcp's put off, so that no endpoint of its
 * has an rma lane over tcp; a context with the trusting configuration and RMA has one (the control that shows
 * the lanes can be seen at all). UCX accepts any key in ucp_config_modify and ignores one no transport knows, so
 * only the endpoint's lanes tell.
 */
@Timeout(60)
class FfmTcpWithheldPutTest {
    /** How ucp_ep_print_info marks a lane used for one-sided bandwidth (rma_bw#0), as against its summary line. */
    private static final String RMA_LANE = "rma_bw#";

    /** UCX's description of an endpoint between two workers of a context made as a node makes it. */
    private static String lanes(Set<UcpContext.Feature> features, Map<String, String> config) {
        try (UcpContext context = UcpContext.create(features, config, true);
                UcpWorker a = context.newWorker(UcpWorker.ThreadMode.MULTI);
                UcpWorker b = context.newWorker(UcpWorker.ThreadMode.MULTI)) {
            // without peer error handling, as a peer that brings its own UCX may connect (error handling keeps
            // rma lanes off tcp anyway, so only such an endpoint shows what b's address offers); it is closed with
            // worker a
            return a.connect(b.address(), UcpEndpoint.ErrorMode.NONE, null).describe();
        }
    }

    @Test
    void aWithholdingNodesEndpointsHaveNoPutOverTcp() {
        String trusting = lanes(EnumSet.of(UcpContext.Feature.AM, UcpContext.Feature.WAKEUP,
                UcpContext.Feature.RMA), UcxTransports.contextConfig("lo", false));
        assertTrue(trusting.contains("tcp/") && trusting.contains(RMA_LANE), trusting);

        String withholding = lanes(EnumSet.of(UcpContext.Feature.AM, UcpContext.Feature.WAKEUP),
                UcxTransports.contextConfig("lo", true));
        assertTrue(withholding.contains("tcp/"), withholding);
        assertFalse(withholding.contains(RMA_LANE), withholding);
    }
}
