package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real connection flood against a server at its descriptor limit (the "10 000 clients at once: Too many
 * open files, and the server exited"): a child JVM serving tcp:// with {@code ulimit -n} {@value #LIMIT} gets
 * {@value #SILENT} connections that never speak, more than it has descriptors; its accept thread must live on, a
 * real client must then handshake and echo within 5 s, and the child's log must stay short.
 */
@Timeout(120)
class TcpDescriptorFloodTest {
    private static final int LIMIT = 256;
    private static final int SILENT = 600;
    private static final int MAX_WARN_LINES = 40;

    @Test
    void serverAtItsDescriptorLimitSurvivesAFloodAndTakesARealClient(@TempDir Path dir) throws Exception {
        ProcessBuilder java = ChildJvm.of(FloodServerMain.class, List.of("tcp://127.0.0.1:0?handshakeTimeout=30s"));
        List<String> command = new ArrayList<>(List.of("bash", "-c", "ulimit -n " + LIMIT + " && exec \"$@\"",
                "bash"));
        command.addAll(java.command());
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().clear();
        pb.environment().putAll(java.environment());
        Path stderr = dir.resolve("server.err");
        pb.redirectError(stderr.toFile());
        Process child = pb.start();
        List<SocketChannel> silent = new ArrayList<>();
        long clientMillis;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8));
            String line = ChildJvm.readLine(out, 60);
            assertNotNull(line, "the server printed nothing; its stderr:\n" + Files.readString(stderr));
            assertTrue(line.startsWith("listening "), "the server's first line: " + line);
            int port = Integer.parseInt(line.substring("listening ".length()).trim());
            for (int i = 0; i < SILENT; i++) {
                silent.add(Raw.connect(port));
            }
            long start = System.nanoTime();
            try (Communicator client = Communicators.connect("tcp://127.0.0.1:" + port
                    + "?connectTimeout=5s&readTimeout=5s")) {
                client.write(ByteBuffer.allocate(4).putInt(0, 0x5eed));
                client.sync();
                ByteBuffer echo = ByteBuffer.allocate(4);
                client.readFully(echo);
                assertEquals(0x5eed, echo.getInt(0), "the echo");
                clientMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                client.write(ByteBuffer.allocate(1));
                client.sync();
            }
            assertTrue(clientMillis < 5000, "the real client took " + clientMillis + " ms");
            assertTrue(child.isAlive(), "the server is still running");
        } finally {
            for (SocketChannel c : silent) {
                c.close();
            }
            child.getOutputStream().close();
            if (!child.waitFor(20, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        String log = Files.readString(stderr);
        List<String> warnings = log.lines().filter(l -> l.contains(" WARN ")).toList();
        assertTrue(log.contains("Too many open files"), "the flood took the server past its descriptor limit "
                + LIMIT + "; its stderr:\n" + log);
        assertFalse(log.contains("FATAL") || log.contains("no further peers will be accepted"),
                "the server stopped accepting:\n" + log);
        assertTrue(warnings.size() <= MAX_WARN_LINES, warnings.size() + " WARN lines for a flood of " + SILENT
                + " peers; at most " + MAX_WARN_LINES + " expected:\n" + String.join("\n", warnings));
        System.out.println("flood of " + SILENT + " at ulimit -n " + LIMIT + ": the real client echoed in "
                + clientMillis + " ms; the server wrote " + warnings.size() + " WARN lines:\n"
                + String.join("\n", warnings));
    }
}
