package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.servercomm.ServerMain;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionRequest;
import io.rdmacomm.session.SessionStatus;
import io.rdmacomm.testkit.ChildJvm;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every exchange of issue 5 end to end: a servercomm JVM and clientcomm JVMs on loopback, once per transport
 * ({@code tcp}, and {@code rdma} where its provider is on the class path and available; otherwise those cases are
 * skipped with the reason), with the clients' printed output checked. The tests that need a server with default
 * options share one per transport ({@link #sharedServer}, as a deployed server serves one client after another;
 * their groups have names of their own); a test that needs other options or reads the server's log starts its own.
 * One subclass per transport ({@link TcpExchangesEndToEndTest}, {@link RdmaExchangesEndToEndTest}), each naming its
 * scheme in a static {@code schemes()}, so the two can run in separate test JVMs at once.
 */
@Timeout(180)
abstract class ExchangesEndToEnd {
    private static final long SECONDS = Jvms.CLIENT_SECONDS * 2;

    @TempDir
    Path dir;

    private final List<Process> servers = new ArrayList<>();

    /** The shared servers' logs. */
    @TempDir
    static Path sharedDir;

    /** scheme -> its shared server with default options, started by the first test that asks for it. */
    private static final Map<String, Process> SHARED = new HashMap<>();
    private static final Map<String, String> SHARED_ENDPOINTS = new HashMap<>();

    @AfterEach
    void stopServers() throws Exception {
        stop(servers);
    }

    @AfterAll
    static synchronized void stopSharedServers() throws Exception {
        stop(SHARED.values());
        SHARED.clear();
        SHARED_ENDPOINTS.clear();
    }

    private static void stop(Collection<Process> processes) throws Exception {
        for (Process p : processes) {
            if (p.isAlive()) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** A servercomm of this test's own, with {@code options}, its stderr in server.err of the test's directory. */
    private String server(String scheme, String... options) throws Exception {
        Jvms.assumeAvailable(scheme);
        Path err = dir.resolve("server.err");
        Process p = startServer(scheme, List.of(options), err);
        servers.add(p);
        return awaitListening(p, err);
    }

    /**
     * The servercomm with default options that the tests of {@code scheme} share: started on first use, stopped
     * after the last test; one that has exited since fails the test that asks for it, with its stderr.
     */
    private static synchronized String sharedServer(String scheme) throws Exception {
        Jvms.assumeAvailable(scheme);
        Path err = sharedDir.resolve(scheme + "-server.err");
        Process p = SHARED.get(scheme);
        if (p == null) {
            p = startServer(scheme, List.of(), err);
            SHARED.put(scheme, p);
            SHARED_ENDPOINTS.put(scheme, awaitListening(p, err));
        }
        if (!p.isAlive()) {
            fail("the shared " + scheme + ":// servercomm exited (" + p.exitValue() + "); its stderr:\n"
                    + Files.readString(err));
        }
        return SHARED_ENDPOINTS.get(scheme);
    }

    private static Process startServer(String scheme, List<String> options, Path err) throws Exception {
        List<String> args = new ArrayList<>(List.of("--verbose", "--endpoint", scheme + "://127.0.0.1:0"));
        args.addAll(options);
        return Jvms.java(ServerMain.class, args).redirectError(err.toFile()).start();
    }

    private static String awaitListening(Process p, Path err) throws Exception {
        try {
            return Jvms.awaitListening(p);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; servercomm's stderr:\n" + Files.readString(err), e);
        }
    }

    private Jvms.Result client(String endpoint, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--endpoint", endpoint));
        all.addAll(List.of(args));
        return Jvms.client(dir, all.toArray(String[]::new));
    }

    private CompletableFuture<Jvms.Result> clientAsync(String endpoint, String... args) {
        List<String> all = new ArrayList<>(List.of("--endpoint", endpoint));
        all.addAll(List.of(args));
        return Jvms.clientAsync(dir, all.toArray(String[]::new));
    }

    private static void assertOk(Jvms.Result r) {
        assertEquals(0, r.code(), r.toString());
        assertEquals(List.of(), r.errBesidesJucxNotice(), r.toString());
    }

    /** A failure: exit 1, nothing on stdout, one line on stderr containing every one of {@code parts}. */
    private static void assertFailure(Jvms.Result r, String... parts) {
        assertEquals(1, r.code(), r.toString());
        assertEquals(List.of(), r.out(), r.toString());
        List<String> err = r.errBesidesJucxNotice();
        assertEquals(1, err.size(), r.toString());
        assertTrue(err.get(0).startsWith("clientcomm: "), r.toString());
        for (String part : parts) {
            assertTrue(err.get(0).contains(part), "'" + part + "' missing from\n" + r);
        }
    }

    // ---- send ----------------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("schemes")
    void sendIsAcknowledgedWithTheByteCountAndCrc32cOfTheMessage(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);
        String message = "hello over " + scheme + ", acknowledged";
        CRC32C crc = new CRC32C();
        crc.update(message.getBytes(StandardCharsets.UTF_8));

        Jvms.Result r = client(endpoint, "send", "--message", message);

        assertOk(r);
        if (scheme.equals("rdma") && Runtime.version().feature() < 22) {
            // provider=ucx runs on ucx-jucx below JDK 22, and says so once, with what it costs and how to get ucx-ffm
            assertTrue(r.err().size() == 1 && r.err().get(0).contains(ChildJvm.JUCX_NOTICE)
                    && r.err().get(0).contains("JDK 22"), r.toString());
        }
        assertEquals(List.of(String.format(Locale.ROOT, "send: %d bytes sent; the server acknowledged %d bytes with"
                + " CRC32C 0x%08x, matching", message.length(), message.length(), crc.getValue())), r.out());
    }

    // ---- write ---------------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("schemes")
    void writeLargerThanTheRegionGoesInChunksAndTheChecksumsMatch(String scheme) throws Exception {
        String endpoint = server(scheme, "--region-size", "64k");

        Jvms.Result r = client(endpoint, "write", "--size", "1m");

        assertOk(r);
        assertEquals(1, r.out().size(), r.toString());
        assertTrue(r.out().get(0).matches("write: 1048576 bytes put one-sided in 16 chunks into the server's"
                + " 65536-byte region; server SHA-256 [0-9a-f]{64}, matching"), r.toString());
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void writeWithinTheRegionIsOneChunk(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);

        Jvms.Result r = client(endpoint, "write", "--size", "1000");

        assertOk(r);
        assertTrue(r.out().get(0).startsWith("write: 1000 bytes put one-sided in 1 chunk into the server's"
                + " 1000-byte region; server SHA-256 "), r.toString());
    }

    // ---- read ----------------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("schemes")
    void readVerifiesThePatternAndPrintsTheFirstBytes(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);
        StringBuilder first = new StringBuilder();
        for (int i = 1000; i < 1016; i++) {
            first.append(String.format(Locale.ROOT, " %02x", (i * 31 + 7) & 0xff));
        }

        Jvms.Result r = client(endpoint, "read", "--offset", "1000", "--length", "100k");

        assertOk(r);
        assertEquals(List.of("read: 102400 bytes at offset 1000 of the server's 1048576-byte region, pattern"
                + " verified:" + first + " ..."), r.out());
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void readOutOfBoundsFailsWithTheTransportsRemoteAccessError(String scheme) throws Exception {
        String endpoint = server(scheme, "--region-size", "4k");

        Jvms.Result r = client(endpoint, "read", "--offset", "4090", "--length", "10");

        assertFailure(r, "out of bounds", "10 bytes at offset 4090", "length 4096");
        assertOk(client(endpoint, "read", "--offset", "4086", "--length", "10"));
    }

    // ---- call ----------------------------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("schemes")
    void callRunsBuiltinsAndPluginsAndPrintsTheOutputPutIntoTheClientsRegion(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);
        byte[] file = new byte[200_000];
        new Random(11).nextBytes(file);
        Path input = Files.write(dir.resolve("input.bin"), file);
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(file));

        assertEquals(List.of("HELLO, GVIRTUS"), callOk(endpoint, "upper", "--input", "hello, gvirtus"));
        assertEquals(List.of("123456789012345678901234567900"),
                callOk(endpoint, "sum", "--input", "123456789012345678901234567890, 4 6"));
        assertEquals(List.of(sha), callOk(endpoint, "sha256", "--input-file", input.toString()));
        assertEquals(List.of("uryyb"), callOk(endpoint, "rot13", "--input", "hello"));
    }

    private List<String> callOk(String endpoint, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("call"));
        all.addAll(List.of(args));
        Jvms.Result r = client(endpoint, all.toArray(String[]::new));
        assertOk(r);
        return r.out();
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void callErrorsAreClearAndTheServerGoesOnServing(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);

        assertFailure(client(endpoint, "call", "format-disk"), "UNKNOWN_ROUTINE",
                "unknown routine 'format-disk'; this server has: echo, rot13, sha256, sum, upper");
        assertFailure(client(endpoint, "call", "echo", "--input", "seventeen bytes!!", "--output-size", "8"),
                "OUTPUT_TOO_LARGE", "produced 17 bytes", "holds 8");
        assertFailure(client(endpoint, "call", "sum", "--input", "1 2 three"),
                "routine 'sum' exited with code 1: sum: 'three' is not an integer");
        assertEquals(List.of("still serving"), callOk(endpoint, "echo", "--input", "still serving"));
    }

    // ---- alltoall and broadcast ----------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("schemes")
    void allToAllOfThreeClientsGivesEachEveryContributionInRankOrder(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);
        List<String> messages = List.of("Client 1 Message", "Client 2 Message", "Client 3 Message");
        List<CompletableFuture<Jvms.Result>> clients = new ArrayList<>();
        for (String m : messages) {
            clients.add(clientAsync(endpoint, "alltoall", "--group", "demo", "--members", "3", "--size", "64",
                    "--message", m));
        }
        Pattern own = Pattern.compile("rank (\\d): (.*) \\(this client\\)");
        List<String> combined = null;
        Set<Integer> ranks = new HashSet<>();
        for (int i = 0; i < clients.size(); i++) {
            Jvms.Result r = clients.get(i).get(SECONDS, TimeUnit.SECONDS);
            assertOk(r);
            assertEquals(5, r.out().size(), r.toString());
            Matcher header = Pattern.compile("alltoall: group demo, rank (\\d) of 4 participants, 64 bytes each")
                    .matcher(r.out().get(0));
            assertTrue(header.matches(), r.toString());
            int rank = Integer.parseInt(header.group(1));
            ranks.add(rank);
            assertEquals("rank 0: server", r.out().get(1), r.toString());
            Matcher mine = own.matcher(r.out().get(1 + rank));
            assertTrue(mine.matches() && mine.group(2).equals(messages.get(i)), r.toString());
            List<String> withoutMark = r.out().subList(1, 5).stream().map(l -> l.replace(" (this client)", ""))
                    .toList();
            if (combined == null) {
                combined = withoutMark;
            }
            assertEquals(combined, withoutMark, "every client sees the same combined result");
        }
        assertEquals(Set.of(1, 2, 3), ranks);
        assertEquals(Set.copyOf(messages), Set.copyOf(combined.subList(1, 4).stream()
                .map(l -> l.substring("rank n: ".length())).toList()));
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void broadcastDeliversTheOfferedMessageToEveryMember(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);
        CompletableFuture<Jvms.Result> offerer = clientAsync(endpoint, "broadcast", "--group", "news", "--members",
                "3", "--message", "hello everyone");
        CompletableFuture<Jvms.Result> second = clientAsync(endpoint, "broadcast", "--group", "news", "--members",
                "3");
        CompletableFuture<Jvms.Result> third = clientAsync(endpoint, "broadcast", "--group", "news", "--members",
                "3");
        Jvms.Result o = offerer.get(SECONDS, TimeUnit.SECONDS);
        assertOk(o);
        Matcher m = Pattern.compile("broadcast: group news, rank (\\d) of 4 participants, from rank (\\d) \\(this"
                + " client\\): hello everyone").matcher(o.out().get(0));
        assertTrue(m.matches(), o.toString());
        String source = m.group(2);
        for (CompletableFuture<Jvms.Result> f : List.of(second, third)) {
            Jvms.Result r = f.get(SECONDS, TimeUnit.SECONDS);
            assertOk(r);
            assertTrue(r.out().get(0).matches("broadcast: group news, rank \\d of 4 participants, from rank "
                    + source + ": hello everyone"), r.toString());
        }
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void broadcastWithoutAnOfferCarriesTheServersMessage(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);

        Jvms.Result r = client(endpoint, "broadcast", "--group", "solo", "--members", "1");

        assertOk(r);
        assertEquals(List.of("broadcast: group solo, rank 1 of 2 participants, from rank 0 (server): servercomm to"
                + " group 'solo' of 1 members"), r.out());
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void aGroupThatNeverFillsTimesOut(String scheme) throws Exception {
        String endpoint = server(scheme, "--group-timeout", "2s");

        assertFailure(client(endpoint, "broadcast", "--group", "lonely", "--members", "2"),
                "GROUP_TIMEOUT", "group 'lonely' got 1 of 2 members within 2000 ms");
        assertOk(client(endpoint, "broadcast", "--group", "lonely", "--members", "1"));
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void groupSizeAndShapeErrorsAreClear(String scheme) throws Exception {
        String endpoint = server(scheme, "--max-group-size", "3");

        assertFailure(client(endpoint, "alltoall", "--group", "big", "--members", "4", "--message", "x"),
                "GROUP_TOO_LARGE", "group 'big' of 4 members exceeds this server's maximum of 3");

        CompletableFuture<Jvms.Result> waiting = clientAsync(endpoint, "alltoall", "--group", "shape", "--members",
                "2", "--size", "8", "--message", "first");
        awaitServerLog("ALLTOALL in group 'shape' of 2 members");
        assertFailure(client(endpoint, "alltoall", "--group", "shape", "--members", "2", "--size", "16", "--message",
                "other"), "GROUP_MISMATCH", "group 'shape' is forming ALLTOALL of 2 members with 8-byte messages;"
                + " this client asked for ALLTOALL of 2 members with 16-byte messages");
        Jvms.Result second = client(endpoint, "alltoall", "--group", "shape", "--members", "2", "--size", "8",
                "--message", "second");
        assertOk(second);
        Jvms.Result first = waiting.get(SECONDS, TimeUnit.SECONDS);
        assertOk(first);
        assertEquals(first.out().subList(1, 4).stream().map(l -> l.replace(" (this client)", "")).toList(),
                List.of("rank 0: server", "rank 1: first", "rank 2: second"));
    }

    /** Polls servercomm's log, with a deadline, until it has a line containing {@code text}. */
    private void awaitServerLog(String text) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.readString(dir.resolve("server.err")).contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("servercomm never logged '" + text + "'");
            }
            Thread.onSpinWait();
        }
    }

    // ---- everything at once, and bad frames ----------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("schemes")
    void theServerServesEveryExchangeAtOnce(String scheme) throws Exception {
        String endpoint = sharedServer(scheme);
        List<CompletableFuture<Jvms.Result>> clients = List.of(
                clientAsync(endpoint, "alltoall", "--group", "mix", "--members", "2", "--message", "a"),
                clientAsync(endpoint, "send", "--message", "meanwhile"),
                clientAsync(endpoint, "write", "--size", "3m"),
                clientAsync(endpoint, "read", "--length", "1m"),
                clientAsync(endpoint, "call", "upper", "--input", "meanwhile"),
                clientAsync(endpoint, "echo", "--size", "1k", "--count", "200"),
                clientAsync(endpoint, "alltoall", "--group", "mix", "--members", "2", "--message", "b"));
        for (CompletableFuture<Jvms.Result> c : clients) {
            assertOk(c.get(SECONDS, TimeUnit.SECONDS));
        }
    }

    @ParameterizedTest
    @MethodSource("schemes")
    void oversizedAndTruncatedFramesAreAnsweredAndTheServerGoesOnServing(String scheme) throws Exception {
        String endpoint = server(scheme, "--region-size", "4k");
        try (Communicator raw = Communicators.connect(endpoint)) {
            SessionClient.open(raw, SessionRequest.oneSidedWrite(100_000));
            RegionDescriptor region = RegionDescriptor.readFrom(ExchangeResult.expectOk(raw, "write").body());
            assertEquals(4096, region.length());
            SessionProtocol.writeNotification(raw, 5000);
            ExchangeResult r = ExchangeResult.read(raw);
            assertEquals(SessionStatus.BAD_FRAME, r.status());
            assertTrue(r.message().contains("5000 bytes; the region holds 4096"), r.message());
        }
        try (Communicator raw = Communicators.connect(endpoint)) {
            SessionClient.open(raw, SessionRequest.send(100));
            raw.write(ByteBuffer.wrap("only part".getBytes(StandardCharsets.US_ASCII)));
            raw.sync();
        }
        awaitServerLog("TRUNCATED: SEND message");
        assertOk(client(endpoint, "send", "--message", "after the bad ones"));
    }
}
