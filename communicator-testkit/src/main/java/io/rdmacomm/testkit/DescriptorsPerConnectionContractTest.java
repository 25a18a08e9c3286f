package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import java.io.IOException;
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
 * The file descriptors one accepted connection holds in the server: {@value #CLIENTS} clients, each in its own child
 * JVM ({@link HoldConnectionsMain}: peers in one process may share a transport connection, such as UCX's tcp, or a
 * shared-memory mapping), connect to a server in this JVM after a first one (which may set up what the server's
 * connections share, such as a provider's node); the descriptors this process holds then grew by at most
 * {@code CommunicatorProvider.descriptorsPerConnection} per connection (pipes to the child processes not counted).
 */
@Timeout(120)
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
    public void anAcceptedConnectionHoldsAtMostTheDescriptorsItsProviderStates() throws Exception {
        Endpoint endpoint = Endpoint.parse(serverUri);
        int stated = Communicators.provider(endpoint.scheme()).descriptorsPerConnection(endpoint);
        List<Communicator> accepted = new ArrayList<>();
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=60s")) {
            String at = server.endpoint().toString();
            long base = descriptors(kinds());
            Process first = hold(at, 1);
            accepted.add(server.accept());
            Map<String, Integer> kindsBefore = kinds();
            long afterFirst = descriptors(kindsBefore);
            List<Process> rest = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                rest.add(hold(at, 1));
                accepted.add(server.accept());
            }
            Map<String, Integer> added = kinds();
            long after = descriptors(added);
            kindsBefore.forEach((k, n) -> added.merge(k, -n, Integer::sum));
            added.values().removeIf(n -> n == 0);
            double per = (after - afterFirst) / (double) CLIENTS;
            LOG.info("{}: descriptors in the server: {} serving, {} after the first connection, {} after {} more:"
                    + " {} per connection (stated: {}); added by kind: {}", serverUri, base, afterFirst, after, CLIENTS,
                    per, stated, added);
            rest.add(first);
            for (Process p : rest) {
                p.getOutputStream().close();
                assertEquals(0, p.waitFor(), "the holding client's exit status");
            }
            assertTrue(after - afterFirst <= (long) stated * CLIENTS, CLIENTS + " connections added "
                    + (after - afterFirst) + " descriptors to the server, more than the " + stated
                    + " per connection its provider states");
        } finally {
            for (Communicator c : accepted) {
                c.close();
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

    private static Process hold(String endpoint, int n) throws Exception {
        try (PeerSignals signals = PeerSignals.listen()) {
            Process p = signals.start(ChildJvm.of(HoldConnectionsMain.class, List.of(endpoint, Integer.toString(n)))
                    .redirectError(ProcessBuilder.Redirect.INHERIT));
            if (signals.await("CONNECTED " + n, 60) == null) {
                throw new AssertionError("the holding client ended before it connected " + n + " clients");
            }
            return p;
        }
    }
}
