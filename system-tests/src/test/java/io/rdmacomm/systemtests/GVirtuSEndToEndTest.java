package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rdmacomm.servercomm.ServerMain;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code servercomm --protocol gvirtus} and {@code clientcomm gvirtus} as separate JVMs: on the raw TCP wire a
 * real GVirtuS peer speaks, on framed {@code tcp://} and on {@code rdma://} (UCX; skipped with the reason where it
 * cannot run) for Java frontends; and malformed input from plain sockets against the real server process.
 */
@Timeout(300)
class GVirtuSEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    private Process server;

    @AfterEach
    void stopServer() throws Exception {
        if (server != null && server.isAlive()) {
            server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private String startServer(String uri) throws Exception {
        Jvms.assumeAvailable(uri.substring(0, uri.indexOf(':')));
        server = Jvms.java(ServerMain.class, List.of("--verbose", "--protocol", "gvirtus", "--endpoint", uri))
                .redirectError(dir.resolve("server.err").toFile()).start();
        try {
            return Jvms.awaitListening(server);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; servercomm's stderr:\n"
                    + Files.readString(dir.resolve("server.err")), e);
        }
    }

    /** Runs {@code clientcomm --endpoint E gvirtus ROUTINE ARGS... --json}; returns its one JSON object. */
    private JsonNode call(String endpoint, String routine, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--endpoint", endpoint, "gvirtus", routine, "--json"));
        all.addAll(List.of(args));
        Jvms.Result r = Jvms.client(dir, all.toArray(String[]::new));
        assertEquals(0, r.code(), r.toString());
        assertEquals(List.of(), r.errBesidesJucxNotice(), r.toString());
        assertEquals(1, r.out().size(), r.toString());
        JsonNode o = JSON.readTree(r.out().get(0));
        assertEquals(routine, o.get("routine").asText(), r.toString());
        return o;
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp://127.0.0.1:0?wire=raw", "tcp://127.0.0.1:0", "rdma://127.0.0.1:0"})
    void theBuiltinRoutinesAnswerAcrossJvms(String uri) throws Exception {
        String endpoint = startServer(uri);
        assertTrue(endpoint.startsWith(uri.substring(0, uri.indexOf("0")))
                && endpoint.endsWith(uri.contains("?") ? uri.substring(uri.indexOf('?')) : ""), endpoint);

        // echo: one pointer argument of 1 MiB - 8 bytes, so the whole input is 1 MiB
        byte[] payload = new byte[MIB - 8];
        new Random(13).nextBytes(payload);
        byte[] input = ByteBuffer.allocate(MIB).order(ByteOrder.LITTLE_ENDIAN).putLong(payload.length).put(payload)
                .array();
        Path file = dir.resolve("echo.in");
        Files.write(file, input);
        JsonNode echo = call(endpoint, "echo", "--input-file", file.toString());
        assertEquals(0, echo.get("exitCode").asInt());
        assertEquals(HexFormat.of().formatHex(input), echo.get("outputHex").asText(), "echo's 1 MiB came back");

        JsonNode sleep = call(endpoint, "sleep", "--input-hex", "19000000"); // u32 25 ms
        assertEquals(0, sleep.get("exitCode").asInt());
        assertTrue(sleep.get("elapsedSeconds").asDouble() >= 0.025, "slept 25 ms, reported " + sleep);
        assertEquals("", sleep.get("outputHex").asText());

        JsonNode fail = call(endpoint, "fail");
        assertEquals(42, fail.get("exitCode").asInt(), "a routine's exit code is a result (clientcomm exit 0)");
        assertEquals("", fail.get("outputHex").asText());

        JsonNode unknown = call(endpoint, "cudaNoSuchRoutine");
        assertEquals(-1, unknown.get("exitCode").asInt());
        assertEquals(0.0, unknown.get("elapsedSeconds").asDouble());
        assertEquals("", unknown.get("outputHex").asText());

        JsonNode devices = call(endpoint, "cudaGetDeviceCount");
        assertEquals(0, devices.get("exitCode").asInt());
        assertEquals("0400000000000000" + "00000000", devices.get("outputHex").asText(), "one int, 0 devices");
    }

    /** Sends {@code bytes} on a plain socket and returns once the server has ended the connection. */
    private static void sendAndAwaitHangUp(int port, byte[] bytes) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(bytes);
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[4096];
            while (in.read(buf) >= 0) {
                // a malformed request gets no reply; whatever came must be followed by the end of the stream
            }
        }
    }

    @Test
    void malformedInputAtTheRawPortEndsThatSessionAndTheServerServesOn() throws Exception {
        String endpoint = startServer("tcp://127.0.0.1:0?wire=raw");
        int port = Integer.parseInt(endpoint.replaceAll(".*:(\\d+)\\?.*", "$1"));

        byte[] http = ("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + "x".repeat(300)).getBytes(StandardCharsets.US_ASCII);
        sendAndAwaitHangUp(port, http); // no NUL within 256 bytes
        byte[] hugeInput = ByteBuffer.allocate(13).order(ByteOrder.LITTLE_ENDIAN)
                .put("echo\0".getBytes(StandardCharsets.US_ASCII)).putLong(-1).array();
        sendAndAwaitHangUp(port, hugeInput);
        byte[] garbage = new byte[4096];
        new Random(7).nextBytes(garbage);
        garbage[100] = 0; // a "name" of binary bytes, then an input length from more of them
        sendAndAwaitHangUp(port, garbage);
        try (Socket truncated = new Socket("127.0.0.1", port)) {
            truncated.getOutputStream().write("ec".getBytes(StandardCharsets.US_ASCII)); // then gone
        }

        JsonNode echo = call(endpoint, "echo", "--input-hex", "0300000000000000" + "616263");
        assertEquals("0300000000000000" + "616263", echo.get("outputHex").asText(), "the server serves on");
        assertTrue(server.isAlive());
        String log = Files.readString(dir.resolve("server.err"));
        assertTrue(log.contains("no NUL within the first 256 bytes (maxRoutineNameBytes)"), log);
        assertTrue(log.contains("exceeds maxInputBytes 268435456"), log);
    }
}
