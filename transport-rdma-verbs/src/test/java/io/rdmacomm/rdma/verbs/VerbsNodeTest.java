package io.rdmacomm.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The verbs node address that the bootstrap carries: checked before rdma-cm sees it. */
@Timeout(10)
class VerbsNodeTest {

    @Test
    void aNodeAddressIsTheRdmaCmAddress() throws Exception {
        assertEquals(new InetSocketAddress("10.0.0.7", 7471),
                VerbsNode.cmAddress(new byte[] {10, 0, 0, 7, 0x1d, 0x2f}));
    }

    @Test
    void badNodeAddressesAreRefusedByName() {
        IOException e = assertThrows(IOException.class, () -> VerbsNode.cmAddress(new byte[] {1, 2, 3}));
        assertTrue(e.getMessage().contains("has 6 bytes, not 3"), e.getMessage());
        e = assertThrows(IOException.class, () -> VerbsNode.cmAddress(new byte[] {10, 0, 0, 7, 0, 0}));
        assertTrue(e.getMessage().contains("no rdma-cm port"), e.getMessage());
    }
}
