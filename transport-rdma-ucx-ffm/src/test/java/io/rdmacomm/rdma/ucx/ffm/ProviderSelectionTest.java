package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.TransportUnavailableException;
import io.rdmacomm.rdma.RdmaCommunicator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** provider=ucx picks ucx-ffm where it runs; a forced provider that is not there says why. */
@Timeout(30)
class ProviderSelectionTest {

    @Test
    void ucxIsUcxFfmOnThisJvm() throws Exception {
        try (Communicator c = Communicators.open("rdma://127.0.0.1:0?provider=ucx")) {
            assertEquals("ucx-ffm", ((RdmaCommunicator) c).providerName());
        }
        try (Communicator c = Communicators.open("rdma://127.0.0.1:0")) {
            assertEquals("ucx-ffm", ((RdmaCommunicator) c).providerName(), "the default provider");
        }
    }

    @Test
    void aForcedProviderThatIsNotOnTheClassPathIsRefusedByName() {
        // this module's test class path has no JUCX provider
        TransportUnavailableException e = assertThrows(TransportUnavailableException.class,
                () -> Communicators.open("rdma://127.0.0.1:0?provider=ucx-jucx"));
        assertTrue(e.getMessage().contains("ucx-jucx") && e.getMessage().contains("ucx-ffm"), e.getMessage());
    }
}
