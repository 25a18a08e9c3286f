package io.rdmacomm.api.support;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Texts that go on the wire with a byte limit: reasons, refusals, error messages. */
public final class Utf8 {
    private Utf8() {
    }

    /**
     * The UTF-8 bytes of {@code text}, at most {@code maxBytes} of them: a longer text is cut before the first
     * character that does not fit whole, so what the peer decodes is valid UTF-8 and a prefix of {@code text}.
     *
     * @throws IllegalArgumentException if {@code maxBytes} is negative
     */
    public static byte[] prefix(String text, int maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("negative byte limit " + maxBytes);
        }
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= maxBytes) {
            return bytes;
        }
        int cut = maxBytes;
        while (cut > 0 && (bytes[cut] & 0xc0) == 0x80) {
            cut--; // bytes[cut] continues the character that starts before it: leave that character out
        }
        return Arrays.copyOf(bytes, cut);
    }
}
