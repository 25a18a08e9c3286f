package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file descriptors accepted connections hold in the server, against what the transport states
 * ({@code CommunicatorProvider.descriptorsPerConnection}, and {@code descriptorsPerPeerProcess} for what the
 * connections from one process share, such as UCX's tcp sockets to its worker). After a first connection (which may
 * set up what all connections share, such as a provider's node), {@value #CLIENTS} clients each in a child JVM of
 * its own ({@link HoldConnectionsMain}) connect, then {@value #CLIENTS} more from one child JVM; every connection
 * carries a byte each way before it is counted. The descriptors this process holds may have grown by at most
 * (per connection + per peer process) for each client of its own process, and by (per connection) for each of the
 * clients sharing a process plus one peer process's (pipes to the child processes not counted).
 */
@Timeout(180)
public abstract class DescriptorsPerConnectionContractTest {
    private static final Logger LOG = LoggerFactory.getLogger(DescriptorsPerConnectionContractTest.class);
    static final int CLIENTS = 6;
    /** The kind of the descriptors of the children's standard input and output (not the server's). */
    private static final String PIPE = "pipe:[]";

    private final String serverUri;

    /** {@code serverUri}: a URI on 127.0.0.1 with port 0 and an explicit query ({@code ...?provider=ucx-ffm}). */
    protected DescriptorsPerConnectionContractTest(String serverUri) {
        this.serverUri = serverUri;
    }

    @Test
    public void acceptedConnectionsHoldAtMostTheDescriptorsTheirProviderStates() throws Exception {
        Endpoint endpoint = Endpoint.parse(serverUri);
        CommunicatorProvider provider = Communicators.provider(endpoint.scheme());
        int perConnection = provider.descriptorsPerConnection(endpoint);
        int perPeer = provider.descriptorsPerPeerProcess(endpoint);
        List<Communicator> accepted = new ArrayList<>();
        List<Process> children = new ArrayList<>();
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=60s")) {
            String at = server.endpoint().toString();
            long base = descriptors(kinds());
            children.add(holdAndServe(server, at, 1, accepted));
            Map<String, Integer> kindsBefore = kinds();
            long afterFirst = descriptors(kindsBefore);
            for (int i = 0; i < CLIENTS; i++) {
                children.add(holdAndServe(server, at, 1, accepted));
            }
            Map<String, Integer> added = kinds();
            long afterSeparate = descriptors(added);
            kindsBefore.forEach((k, n) -> added.merge(k, -n, Integer::sum));
            added.values().removeIf(n -> n == 0);
            children.add(holdAndServe(server, at, CLIENTS, accepted));
            long afterShared = descriptors(kinds());
            long separate = afterSeparate - afterFirst;
            long shared = afterShared - afterSeparate;
            LOG.info("{}: descriptors in the server: {} serving, {} after the first connection; {} clients of a process"
                    + " each added {} ({} a client; stated {} per connection + {} per peer process), by kind {};"
                    + " {} clients of one process added {} (stated {})", serverUri, base, afterFirst, CLIENTS,
                    separate, separate / (double) CLIENTS, perConnection, perPeer, added, CLIENTS, shared,
                    (long) CLIENTS * perConnection + perPeer);
            for (Process p : children) {
                p.getOutputStream().close();
                assertEquals(0, p.waitFor(), "the holding client's exit status");
            }
            assertTrue(separate <= (long) (perConnection + perPeer) * CLIENTS, CLIENTS + " clients of a process each"
                    + " added " + separate + " descriptors to the server, more than the " + perConnection
                    + " per connection and " + perPeer + " per peer process their provider states");
            assertTrue(shared <= (long) perConnection * CLIENTS + perPeer, CLIENTS + " clients of one process added "
                    + shared + " descriptors to the server, more than the " + perConnection + " per connection and "
                    + perPeer + " for their process that their provider states");
        } finally {
            for (Communicator c : accepted) {
                c.close();
            }
            for (Process p : children) {
                p.destroyForcibly();
            }
        }
    }

    /** The descriptors of {@code kinds} but the pipes to the child processes of the test. */
    private static long descriptors(Map<String, Integer> kinds) {
        return kinds.entrySet().stream().filter(e -> !e.getKey().equals(PIPE)).mapToLong(Map.Entry::getValue).sum();
    }

    /** This process's descriptors by kind ("socket", "anon_inode:[eventfd]", "/dev/shm", a file's directory). */
    private static Map<String, Integer> kinds() throws IOException {
        Map<String, Integer> byKind = new TreeMap<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                String target;
                try {
                    target = Files.readSymbolicLink(fd).toString();
                } catch (IOException e) {
                    continue; // closed meanwhile
                }
                String kind = target.startsWith("socket:") ? "socket" : target.startsWith("/")
                        ? target.substring(0, Math.max(1, target.lastIndexOf('/'))) : target.replaceAll("\\d+", "");
                byKind.merge(kind, 1, Integer::sum);
            }
        }
        return byKind;
    }

    /**
     * A child JVM connecting {@code n} clients to {@code at}: accepts each, sends back the byte it wrote, and returns
     * once the child has all of them.
     */
    private static Process holdAndServe(Communicator server, String at, int n, List<Communicator> accepted)
            throws Exception {
        try (PeerSignals signals = PeerSignals.listen()) {
            Process p = signals.start(ChildJvm.of(HoldConnectionsMain.class, List.of(at, Integer.toString(n)))
                    .redirectError(ProcessBuilder.Redirect.INHERIT));
            ByteBuffer one = ByteBuffer.allocateDirect(1);
            for (int i = 0; i < n; i++) {
                Communicator c = server.accept();
                accepted.add(c);
                one.clear();
                c.readFully(one);
                c.write(one.flip());
                c.sync();
            }
            if (signals.await("CONNECTED " + n, 60) == null) {
                throw new AssertionError("the holding client ended before it connected " + n + " clients");
            }
            return p;
        }
    }
}
