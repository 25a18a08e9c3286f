package io.rdmacomm.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * Crafted inputs for a server's port (issue 12's findings): each sent on a connection of its own, after which the
 * server must hang up within a bound, and a real client must still be served (the test's part).
 */
public final class HostileInputs {
    /** The start of an rdma:// bootstrap HELLO frame (magic 'RDMB', version 1, type 1) claiming a 100-byte body. */
    public static final byte[] RDMA_BOOTSTRAP_HEADER = {0x52, 0x44, 0x4d, 0x42, 0, 1, 1, 0, 100};

    private HostileInputs() {
    }

    /**
     * 64 KiB of zeros and of 0xff, {@code headerLike} followed by 100 random bytes, HTTP text, and a stalled
     * (slowloris) start of {@code headerLike} that never completes: the server must drop that one by its
     * handshake timeout.
     */
    public static Map<String, byte[]> crafted(byte[] headerLike) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("64 KiB of zeros", new byte[64 * 1024]);
        byte[] ff = new byte[64 * 1024];
        Arrays.fill(ff, (byte) 0xff);
        m.put("64 KiB of 0xff", ff);
        byte[] tail = new byte[100];
        new Random(12).nextBytes(tail);
        byte[] prefixed = Arrays.copyOf(headerLike, headerLike.length + tail.length);
        System.arraycopy(tail, 0, prefixed, headerLike.length, tail.length);
        m.put("a header-like prefix and 100 random bytes", prefixed);
        m.put("HTTP text", ("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n" + "x".repeat(3000))
                .getBytes(StandardCharsets.US_ASCII));
        m.put("a stalled hello (slowloris)", Arrays.copyOf(headerLike, Math.max(1, headerLike.length / 2)));
        return m;
    }

    /**
     * Sends every input on its own connection and waits until the server hangs up (end of stream or reset); what
     * the server replies before is read and ignored.
     *
     * @throws AssertionError naming the input the server did not hang up on within {@code within}
     */
    public static void sendEach(InetSocketAddress server, Map<String, byte[]> inputs, Duration within)
            throws IOException {
        for (Map.Entry<String, byte[]> e : inputs.entrySet()) {
            try (Socket s = new Socket()) {
                s.connect(server, (int) within.toMillis());
                s.setSoTimeout((int) within.toMillis());
                try {
                    s.getOutputStream().write(e.getValue());
                    s.getOutputStream().flush();
                } catch (SocketException reset) {
                    continue; // the server hung up while we were still sending
                }
                awaitHangUp(s.getInputStream(), e.getKey(), within);
            }
        }
    }

    private static void awaitHangUp(InputStream in, String what, Duration within) throws IOException {
        byte[] b = new byte[4096];
        try {
            while (in.read(b) >= 0) {
                // a reply is allowed; the server must still hang up
            }
        } catch (SocketTimeoutException t) {
            throw new AssertionError("the server did not hang up on " + what + " within " + within);
        } catch (SocketException reset) {
            // reset: hung up
        }
    }
}
