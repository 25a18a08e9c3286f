package io.rdmacomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.clientcomm.bench.AllocationMeter;
import io.rdmacomm.clientcomm.bench.Messages;
import io.rdmacomm.clientcomm.bench.Progress;
import io.rdmacomm.clientcomm.bench.Runs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The raw NIO baseline over real loopback sockets. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RawBaselineTest {
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private RawServer server;
    private InetSocketAddress address;

    @BeforeEach
    void start() throws Exception {
        server = RawServer.start(new InetSocketAddress("127.0.0.1", 0),
                new PrintStream(log, true, StandardCharsets.UTF_8), RawServer.DEFAULT_SINK_BUFFER);
        address = server.address();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        assertFalse(Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith("rdmacomm-bench-raw") && t.isAlive()),
                "a raw server thread outlived close()");
    }

    @Test
    void blockingEchoRecordsEveryRoundTrip() throws Exception {
        try (RawClient client = RawClient.connect(address, RawProtocol.Kind.ECHO_BLOCKING, 0)) {
            Histogram h = Runs.newHistogram();
            Runs.latency(client.blockingRoundTrip(64), 100, 1000, h, Progress.silent(), AllocationMeter.create());
            assertEquals(1000, h.getTotalCount());
            assertTrue(h.getValueAtPercentile(50) > 0);
        }
    }

    @Test
    void busyPollEchoComesBackWhole() throws Exception {
        try (RawClient client = RawClient.connect(address, RawProtocol.Kind.ECHO_BUSY_POLL, 0)) {
            Histogram h = Runs.newHistogram();
            Runs.latency(client.busyPollRoundTrip(100_000), 10, 50, h, Progress.silent(), AllocationMeter.create());
            assertEquals(50, h.getTotalCount());
        }
    }

    @Test
    void theEchoHoldsTheBytesSent() throws Exception {
        try (SocketChannel ch = SocketChannel.open(address)) {
            RawProtocol.greet(ch, RawProtocol.Kind.ECHO_BLOCKING, 0, "test");
            ByteBuffer out = Messages.pattern(4096);
            ByteBuffer in = ByteBuffer.allocateDirect(4096);
            RawProtocol.writeFully(ch, out);
            RawProtocol.readFully(ch, in, "test");
            assertTrue(Messages.sameContent(out, in));
        }
    }

    @Test
    void theSinkAcknowledgesEveryByte() throws Exception {
        long total = 10L << 20;
        try (RawClient client = RawClient.connect(address, RawProtocol.Kind.SINK, total)) {
            long nanos = Runs.bandwidth(client.sender(), Messages.pattern(65536 + 3), total, Progress.silent());
            assertTrue(nanos > 0);
        }
    }

    @Test
    void aClientSpeakingSomethingElseIsRefusedAndTheServerGoesOn() throws Exception {
        try (SocketChannel ch = SocketChannel.open(address)) {
            RawProtocol.writeFully(ch, ByteBuffer.wrap("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer answer = ByteBuffer.allocate(RawProtocol.ANSWER_LENGTH);
            RawProtocol.readFully(ch, answer, "test");
            assertEquals(RawProtocol.ANSWER_MAGIC, answer.getInt(0));
            assertEquals(RawProtocol.STATUS_REFUSED, answer.getInt(4));
        }
        try (RawClient client = RawClient.connect(address, RawProtocol.Kind.ECHO_BLOCKING, 0)) {
            client.blockingRoundTrip(8).roundTrip();
        }
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("got magic 0x47455420"), log::toString);
    }

    @Test
    void aServerThatIsNotARawServerIsNamed() throws Exception {
        try (var other = java.nio.channels.ServerSocketChannel.open()) {
            other.bind(new InetSocketAddress("127.0.0.1", 0));
            InetSocketAddress otherAddress = (InetSocketAddress) other.getLocalAddress();
            Thread answerer = new Thread(() -> {
                try (SocketChannel peer = other.accept()) {
                    RawProtocol.writeFully(peer, ByteBuffer.allocate(8).putInt(0, 0x12345678));
                    RawProtocol.readFully(peer, ByteBuffer.allocate(RawProtocol.HELLO_LENGTH), "client");
                } catch (Exception ignored) {
                    // the client closes once it has read the answer
                }
            }, "rdmacomm-bench-test-answerer");
            answerer.start();
            var e = assertThrows(HandshakeException.class,
                    () -> RawClient.connect(otherAddress, RawProtocol.Kind.ECHO_BLOCKING, 0));
            assertTrue(e.getMessage().contains("is not a raw baseline server") && e.getMessage().contains("0x12345678"),
                    e.getMessage());
            answerer.join(TimeUnit.SECONDS.toMillis(10));
        }
    }
}
