package io.rdmacomm.api.support;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class Utf8Test {
    @Test
    void aTextThatFitsIsUnchanged() {
        assertArrayEquals("héllo".getBytes(StandardCharsets.UTF_8), Utf8.prefix("héllo", 6));
        assertArrayEquals(new byte[0], Utf8.prefix("", 0));
    }

    @Test
    void aLongerTextIsCutBeforeTheCharacterThatDoesNotFit() throws CharacterCodingException {
        // 'é' is 2 bytes, '€' 3, '𝄞' 4 (a surrogate pair in Java): each limit that falls inside one drops it whole
        String text = "aé€𝄞b";
        int[] limits = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
        String[] expected = {"", "a", "a", "aé", "aé", "aé", "aé€", "aé€", "aé€", "aé€", "aé€𝄞", "aé€𝄞b"};
        for (int i = 0; i < limits.length; i++) {
            byte[] cut = Utf8.prefix(text, limits[i]);
            assertTrue(cut.length <= limits[i], "limit " + limits[i]);
            String decoded = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(cut)).toString();
            assertEquals(expected[i], decoded, "limit " + limits[i]);
        }
    }

    @Test
    void aNegativeLimitIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Utf8.prefix("x", -1));
    }
}
