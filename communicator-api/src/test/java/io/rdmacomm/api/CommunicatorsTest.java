package io.rdmacomm.api;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class CommunicatorsTest {

    @Test
    void unknownSchemeNamesTheAvailableOnes() {
        // the api module alone has no transport on its class path
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Communicators.open("smoke://127.0.0.1:1"));
        assertTrue(e.getMessage().contains("unknown scheme 'smoke://'"), e.getMessage());
        assertTrue(e.getMessage().contains("available schemes"), e.getMessage());
    }
}
