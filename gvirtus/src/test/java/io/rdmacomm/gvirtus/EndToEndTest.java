package io.rdmacomm.gvirtus;

import static io.rdmacomm.gvirtus.ScriptedPeer.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.testkit.Faults;
import io.rdmacomm.testkit.LogCapture;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Frontend and backend over a real transport, and a backend fed bytes that are not well-formed requests. The
 * subclasses choose the transport.
 */
@Timeout(60)
abstract class EndToEndTest {
    private LogCapture log;
    private GVirtuSBackend backend;

    /** A server URI for this transport (port 0, or a fresh name). */
    abstract String serverUri();

    @BeforeEach
    void startBackend() throws IOException {
        log = new LogCapture();
        backend = GVirtuSBackend.builder()
                .registerAll(BuiltinRoutines.all())
                .register(TestRoutines.boom())
                .maxSessions(32)
                .start(Communicators.serve(serverUri()));
    }

    @AfterEach
    void stop() {
        backend.close();
        log.close();
    }

    private GVirtuSFrontend frontend() throws IOException {
        return GVirtuSFrontend.connect(backend.endpoint().toString());
    }

    /** A connection on which the test writes whatever bytes it likes. */
    private Communicator rawClient() throws IOException {
        return Communicators.connect(backend.endpoint().toString());
    }

    @Test
    void builtinRoutinesAnswerAsDocumented() throws Exception {
        try (GVirtuSFrontend f = frontend()) {
            GVirtuSResult echo = f.execute("echo", GVirtuSBuffer.create().addPointer("hello".getBytes()));
            assertEquals(0, echo.exitCode());
            assertEquals(FramingTest.ECHO_REPLY.substring(40), HexFormat.of().formatHex(echo.output()));

            GVirtuSResult count = f.execute("cudaGetDeviceCount", GVirtuSBuffer.create().addArray(new int[] {7}));
            assertEquals(0, count.exitCode());
            assertArrayEquals(new int[] {0}, count.outputBuffer().getIntArray());

            GVirtuSResult fail = f.execute("fail", new byte[0]);
            assertEquals(42, fail.exitCode());
            assertEquals(0, fail.output().length);

            GVirtuSResult sleep = f.execute("sleep", GVirtuSBuffer.create().addInt(30));
            assertEquals(0, sleep.exitCode());
            assertTrue(sleep.elapsedSeconds() >= 0.030 && sleep.elapsedSeconds() < 10, "" + sleep.elapsedSeconds());
        }
    }

    @Test
    void oneConnectionServesManyCallsOfAnySize() throws Exception {
        try (GVirtuSFrontend f = frontend()) {
            for (int size : new int[] {0, 1, 7, 4096, 65_537, 1 << 20, 3}) {
                byte[] data = new byte[size];
                Arrays.fill(data, (byte) size);
                GVirtuSResult r = f.execute("echo", GVirtuSBuffer.create().addPointer(data));
                assertEquals(0, r.exitCode(), "size " + size);
                byte[] back = r.outputBuffer().getPointer();
                assertArrayEquals(size == 0 ? null : data, back, "size " + size);
            }
            assertEquals(1, backend.activeSessions());
        }
    }

    @Test
    void unknownRoutineIsMinusOneWithNothingElseAndTheSessionGoesOn() throws Exception {
        try (GVirtuSFrontend f = frontend()) {
            GVirtuSResult r = f.execute("noSuchRoutine", new byte[] {1, 2, 3});
            assertEquals(new GVirtuSResult(-1, 0.0, new byte[0]), r);
            log.await("unknown routine 'noSuchRoutine' (3 input bytes); answering exit code -1");
            assertEquals(0, f.execute("echo", GVirtuSBuffer.create().addNullPointer()).exitCode());
        }
    }

    @Test
    void routineExceptionIsAnErrorExitLoggedAndTheSessionGoesOn() throws Exception {
        try (GVirtuSFrontend f = frontend()) {
            GVirtuSResult r = f.execute("boom", new byte[0]);
            assertEquals(GVirtuSResult.EXIT_ROUTINE_FAILED, r.exitCode());
            log.await("routine 'boom' failed on 0 input bytes; answering exit code -2");
            log.await("deliberate failure in a test routine");
            assertEquals(42, f.execute("fail", new byte[0]).exitCode());
        }
    }

    @Test
    void aRealGVirtuSFrontendsBytesGetTheRealBackendsAnswers() throws Exception {
        // requests and replies captured between GVirtuS's own frontend and backend (see the module README);
        // only the elapsed seconds (bytes 4..12 of each reply) may differ
        String[] requests = {FramingTest.ECHO_REQUEST, "6e6f53756368526f7574696e6500" + "0000000000000000",
            "63756461476574446576696365436f756e7400" + "0c00000000000000" + "0400000000000000" + "07000000",
            "6661696c00" + "0000000000000000"};
        String[] replies = {FramingTest.ECHO_REPLY, FramingTest.UNKNOWN_REPLY,
            "00000000" + "0000000000000000" + "0c00000000000000" + "0400000000000000" + "00000000",
            "2a000000" + "0000000000000000" + "0000000000000000"};
        try (Communicator c = rawClient()) {
            // all four in one write, as a pipelining client would send them
            c.write(ByteBuffer.wrap(hex(String.join("", requests))));
            c.sync();
            for (String expected : replies) {
                byte[] got = new byte[expected.length() / 2];
                c.readFully(ByteBuffer.wrap(got));
                Arrays.fill(got, 4, 12, (byte) 0);
                assertEquals(expected, HexFormat.of().formatHex(got));
            }
        }
    }

    @Test
    void nameWithoutNulEndsTheSessionAndTheBackendServesOn() throws Exception {
        try (Communicator c = rawClient()) {
            // exactly the limit: the backend reads every byte before it gives up, so sync() may not fail on
            // local://, where bytes a peer closes on unread are reported
            c.write(ByteBuffer.wrap("A".repeat(256).getBytes(StandardCharsets.US_ASCII)));
            c.sync();
            assertEndOfStream(c);
        }
        log.await("malformed request", "no NUL within the first 256 bytes (maxRoutineNameBytes)");
        assertBackendStillServes();
    }

    @Test
    void hugeInputLengthEndsTheSessionAndTheBackendServesOn() throws Exception {
        try (Communicator c = rawClient()) {
            c.write(ByteBuffer.wrap(hex("6563686f00" + "ffffffffffffffff")));
            c.sync();
            assertEndOfStream(c);
        }
        log.await("malformed request", "input length 18446744073709551615 bytes exceeds maxInputBytes 268435456");
        assertBackendStillServes();
    }

    @Test
    void truncatedInputEndsTheSessionAndTheBackendServesOn() throws Exception {
        try (Communicator c = rawClient()) {
            c.write(ByteBuffer.wrap(hex(FramingTest.ECHO_REQUEST.substring(0, 2 * 18))));
            c.sync();
        }
        log.await("truncated request", "the input (13 bytes) of request 'echo': 5 of 13 bytes arrived");
        assertBackendStillServes();
    }

    @Test
    void textFromAWrongClientEndsTheSessionAndTheBackendServesOn() throws Exception {
        try (Communicator c = rawClient()) {
            c.write(ByteBuffer.wrap("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
            c.sync();
        }
        log.await("truncated request", "before the NUL that ends its routine name: 'GET / HTTP/1.1\\x0d\\x0a");
        assertBackendStillServes();
    }

    @Test
    void peerGoneMidRequestEndsTheSessionAndTheBackendServesOn() throws Exception {
        Communicator dying = Faults.closeAfterBytes(rawClient(), 100);
        try (GVirtuSFrontend f = new GVirtuSFrontend(dying)) {
            IOException e = assertThrows(IOException.class, () -> f.execute("echo",
                    GVirtuSBuffer.create().addPointer(new byte[1000])));
            assertTrue(e.getMessage().contains("injected fault"), e.getMessage());
        }
        log.await("truncated request", "the input (1008 bytes) of request 'echo': 87 of 1008 bytes arrived");
        assertBackendStillServes();
    }

    @Test
    void severalFrontendsAtOnce() throws Exception {
        int clients = 8;
        int calls = 40;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < clients; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    try (GVirtuSFrontend f = frontend()) {
                        go.await();
                        for (int i = 0; i < calls; i++) {
                            byte[] mine = (id + ":" + i + ":" + "x".repeat(id * 100 + i)).getBytes();
                            GVirtuSResult r = f.execute("echo", GVirtuSBuffer.create().addPointer(mine));
                            assertArrayEquals(mine, r.outputBuffer().getPointer());
                        }
                        assertEquals(0, f.execute("sleep", GVirtuSBuffer.create().addInt(5)).exitCode());
                        return calls;
                    }
                }));
            }
            go.countDown();
            for (Future<Integer> d : done) {
                assertEquals(calls, d.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void threadsSharingOneFrontendEachGetTheirOwnReplies() throws Exception {
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (GVirtuSFrontend shared = frontend()) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        byte[] mine = ("thread " + id + " call " + i).getBytes();
                        GVirtuSResult r = shared.execute("echo", GVirtuSBuffer.create().addPointer(mine));
                        assertArrayEquals(mine, r.outputBuffer().getPointer());
                    }
                    return null;
                }));
            }
            for (Future<?> d : done) {
                d.get();
            }
            assertEquals(1, backend.activeSessions());
        } finally {
            pool.shutdownNow();
        }
    }

    private static void assertEndOfStream(Communicator c) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(64);
        assertEquals(-1, c.read(b), "the backend should have ended the session without replying");
    }

    private void assertBackendStillServes() throws IOException {
        try (GVirtuSFrontend f = frontend()) {
            GVirtuSResult r = f.execute("echo", GVirtuSBuffer.create().addPointer(new byte[] {42}));
            assertArrayEquals(new byte[] {42}, r.outputBuffer().getPointer());
        }
    }
}
