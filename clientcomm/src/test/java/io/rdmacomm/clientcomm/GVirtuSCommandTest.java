package io.rdmacomm.clientcomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.gvirtus.BuiltinRoutines;
import io.rdmacomm.gvirtus.GVirtuSBackend;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code clientcomm gvirtus} in this JVM: against a {@link GVirtuSBackend} with the built-in routines on the
 * in-process {@code local://} transport, and against plain sockets that misbehave on {@code tcp://…?wire=raw}.
 */
@Timeout(30)
class GVirtuSCommandTest {
    /** echo's input and output: one pointer argument, length 5, "hello". */
    private static final String HELLO_POINTER = "0500000000000000" + "68656c6c6f";

    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private GVirtuSBackend backend;
    private ServerSocketChannel fake;

    @AfterEach
    void tearDown() throws Exception {
        if (backend != null) {
            backend.close();
        }
        if (fake != null) {
            fake.close();
        }
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    private String startBackend() throws IOException {
        backend = GVirtuSBackend.builder().registerAll(BuiltinRoutines.all())
                .start(Communicators.serve("local://gvirtus-cli-" + UUID.randomUUID()));
        return backend.endpoint().toString();
    }

    /** A raw-TCP peer that reads whatever comes and answers once with {@code reply}, then closes. */
    private String startFake(byte[] reply) throws IOException {
        fake = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        pool.submit(() -> {
            try (SocketChannel c = fake.accept()) {
                c.read(ByteBuffer.allocate(4096));
                if (reply != null) {
                    c.write(ByteBuffer.wrap(reply));
                    c.shutdownOutput();
                }
                c.read(ByteBuffer.allocate(4096)); // until the client closes
            }
            return null;
        });
        return "tcp://127.0.0.1:" + ((InetSocketAddress) fake.getLocalAddress()).getPort() + "?wire=raw";
    }

    private int run(String... args) {
        return ClientMain.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    private List<String> outLines() {
        return out.toString().lines().toList();
    }

    private void assertOneErrorLine(String expected) {
        List<String> lines = err.toString().lines().toList();
        assertEquals(1, lines.size(), err.toString());
        assertTrue(lines.get(0).startsWith("clientcomm: ") && lines.get(0).contains(expected), lines.get(0));
    }

    @Test
    void echoPrintsExitCodeElapsedSecondsAndTheOutputInHex() throws IOException {
        String endpoint = startBackend();
        assertEquals(0, run("--endpoint", endpoint, "gvirtus", "echo", "--input-hex", HELLO_POINTER));
        List<String> lines = outLines();
        assertEquals(3, lines.size(), out.toString());
        assertEquals("exitCode 0", lines.get(0));
        assertTrue(lines.get(1).matches("elapsedSeconds [0-9.E-]+"), lines.get(1));
        assertEquals("outputHex " + HELLO_POINTER, lines.get(2));
        assertEquals("", err.toString());
    }

    @Test
    void jsonIsOneObjectWithTheFourFields() throws IOException {
        String endpoint = startBackend();
        assertEquals(0, run("--endpoint", endpoint, "gvirtus", "echo", "--input-hex", HELLO_POINTER, "--json"));
        assertEquals(1, outLines().size(), out.toString());
        JsonNode o = new ObjectMapper().readTree(outLines().get(0));
        assertEquals(List.of("routine", "exitCode", "elapsedSeconds", "outputHex"),
                List.copyOf(iterable(o.fieldNames())));
        assertEquals("echo", o.get("routine").asText());
        assertEquals(0, o.get("exitCode").asInt());
        assertTrue(o.get("elapsedSeconds").isNumber() && o.get("elapsedSeconds").asDouble() >= 0, o.toString());
        assertEquals(HELLO_POINTER, o.get("outputHex").asText());
    }

    private static <T> List<T> iterable(java.util.Iterator<T> it) {
        List<T> l = new java.util.ArrayList<>();
        it.forEachRemaining(l::add);
        return l;
    }

    @Test
    void aNonZeroExitCodeIsAResultNotAFailure() throws IOException {
        String endpoint = startBackend();
        assertEquals(0, run("--endpoint", endpoint, "gvirtus", "fail", "--json"));
        JsonNode fail = new ObjectMapper().readTree(outLines().get(0));
        assertEquals(42, fail.get("exitCode").asInt());
        assertEquals("", fail.get("outputHex").asText());

        out.getBuffer().setLength(0);
        assertEquals(0, run("--endpoint", endpoint, "gvirtus", "noSuchRoutine"));
        assertEquals(List.of("exitCode -1", "elapsedSeconds 0.0", "outputHex "), outLines());
        assertEquals("", err.toString());
    }

    @Test
    void theInputMayComeFromAFile(@TempDir Path dir) throws Exception {
        String endpoint = startBackend();
        Path file = dir.resolve("in.bin");
        Files.write(file, java.util.HexFormat.of().parseHex(HELLO_POINTER));
        assertEquals(0, run("--endpoint", endpoint, "gvirtus", "echo", "--input-file", file.toString()));
        assertEquals("outputHex " + HELLO_POINTER, outLines().get(2));
    }

    @Test
    void badInputOptionsAreUsageErrors(@TempDir Path dir) throws IOException {
        String endpoint = startBackend();
        assertEquals(2, run("--endpoint", endpoint, "gvirtus", "echo", "--input-hex", "abc"));
        assertOneErrorLine("--input-hex: ");
        err.getBuffer().setLength(0);
        assertEquals(2, run("--endpoint", endpoint, "gvirtus", "echo", "--input-hex", "zz"));
        assertOneErrorLine("--input-hex: ");
        err.getBuffer().setLength(0);
        assertEquals(2, run("--endpoint", endpoint, "gvirtus", "echo", "--input-file", dir.resolve("nope").toString()));
        assertOneErrorLine("--input-file " + dir.resolve("nope") + ": no such file");
        err.getBuffer().setLength(0);
        assertEquals(2, run("--endpoint", endpoint, "gvirtus", "echo", "--input-hex", "00", "--input-file", "x"));
        assertOneErrorLine("mutually exclusive");
        err.getBuffer().setLength(0);
        assertEquals(2, run("--endpoint", endpoint, "gvirtus"));
        assertOneErrorLine("ROUTINE");
        assertEquals("", out.toString());
    }

    @Test
    void aRefusedConnectionIsOneLineAndExitOne() throws IOException {
        int port;
        try (ServerSocketChannel s = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            port = ((InetSocketAddress) s.getLocalAddress()).getPort();
        }
        assertEquals(1, run("--endpoint", "tcp://127.0.0.1:" + port + "?wire=raw", "gvirtus", "echo"));
        assertOneErrorLine("127.0.0.1:" + port);
        assertEquals("", out.toString());
    }

    @Test
    void aReplyCutShortIsOneLineAndExitOne() throws IOException {
        String endpoint = startFake(new byte[] {0, 0, 0, 0, 0, 0});
        assertEquals(1, run("--endpoint", endpoint, "gvirtus", "echo"));
        assertOneErrorLine("end of stream");
        assertEquals("", out.toString());
    }

    @Test
    void aReplyWithAnImpossibleOutputLengthIsOneLineAndExitOne() throws IOException {
        byte[] reply = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN).putInt(0).putDouble(0).putLong(-1)
                .array();
        String endpoint = startFake(reply);
        assertEquals(1, run("--endpoint", endpoint, "gvirtus", "echo"));
        assertOneErrorLine("exceeds maxOutputBytes");
        assertEquals("", out.toString());
    }

    @Test
    void noReplyWithinTheReplyTimeoutIsOneLineAndExitOne() throws IOException {
        String endpoint = startFake(null);
        assertEquals(1, run("--endpoint", endpoint, "gvirtus", "sleep", "--reply-timeout", "300ms"));
        assertOneErrorLine("readTimeout");
        assertEquals("", out.toString());
    }
}
