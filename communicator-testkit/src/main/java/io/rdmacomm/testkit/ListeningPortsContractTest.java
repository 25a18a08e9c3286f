package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ports a server opens: a server on {@code 127.0.0.1} listens on its endpoint's port and on nothing outside
 * 127.0.0.1, while a client in another process streams to it (so whatever the transport opens per connection, such
 * as UCX's tcp transport ports, is open too). Issue 12 found UCX's ports open on another interface of the host
 * (192.0.2.2 here) beside an rdma:// server on 127.0.0.1. Listening sockets are read from {@code /proc/net/tcp}
 * and {@code tcp6}, kept to those whose inode is an open fd of this process and that were not open before the
 * server.
 */
@Timeout(120)
public abstract class ListeningPortsContractTest extends PeerProcessKit {
    private static final Logger LOG = LoggerFactory.getLogger(ListeningPortsContractTest.class);
    private static final Pattern SOCKET = Pattern.compile("socket:\\[(\\d+)]");
    private static final String LISTEN = "0A";


    /** {@code serverUri}: a URI on 127.0.0.1 with port 0 and an explicit query ({@code ...?provider=ucx-ffm}). */
    protected ListeningPortsContractTest(String serverUri) {
        super(serverUri);
    }

    @Test
    public void aServerOnLoopbackListensOnItsPortAndNowhereElse() throws Exception {
        Set<String> before = listeningSockets();
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s")) {
            peer = PeerProcess.start("write", server);
            try (Communicator client = server.accept()) {
                peer.expect("CONNECTED");
                ByteBuffer b = ByteBuffer.allocateDirect(64 * 1024);
                long received = 0;
                while (received < 4L * b.capacity()) {
                    int n = client.read(b.clear());
                    assertTrue(n > 0, "the streaming peer ended after " + received + " bytes");
                    received += n;
                }
                Set<String> opened = new TreeSet<>(listeningSockets());
                opened.removeAll(before);
                LOG.info("{}: the server listens on {}", serverUri, opened);
                assertTrue(opened.contains("127.0.0.1:" + server.endpoint().port()),
                        "the server's own port is not among the sockets it listens on: " + opened);
                assertEquals(List.of(), opened.stream().filter(a -> !a.startsWith("127.0.0.1:")).toList(),
                        "sockets this server listens on outside its endpoint's address 127.0.0.1 (all: " + opened + ")");
            }
        }
    }

    /** The TCP sockets this process listens on, as {@code address:port}: IPv4 dotted, IPv6 {@code [hex]}. */
    static Set<String> listeningSockets() throws IOException {
        Set<String> inodes = new HashSet<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    Matcher m = SOCKET.matcher(Files.readSymbolicLink(fd).toString());
                    if (m.matches()) {
                        inodes.add(m.group(1));
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        }
        Set<String> listening = new HashSet<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(table);
            if (!Files.exists(p)) {
                continue;
            }
            List<String> lines = Files.readAllLines(p); // once: the table changes as sockets come and go
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 9 && f[3].equals(LISTEN) && inodes.contains(f[9])) {
                    listening.add(address(f[1]));
                }
            }
        }
        return listening;
    }

    /** {@code 0100007F:1F90} (IPv4, little-endian) or 32 hex digits (IPv6, four little-endian words) and a port. */
    static String address(String hex) {
        String[] hp = hex.split(":");
        int port = Integer.parseInt(hp[1], 16);
        String h = hp[0];
        if (h.length() == 8) {
            return Integer.parseInt(h.substring(6, 8), 16) + "." + Integer.parseInt(h.substring(4, 6), 16) + "."
                    + Integer.parseInt(h.substring(2, 4), 16) + "." + Integer.parseInt(h.substring(0, 2), 16) + ":"
                    + port;
        }
        StringBuilder bytes = new StringBuilder();
        for (int word = 0; word < 4; word++) {
            String w = h.substring(word * 8, word * 8 + 8);
            bytes.append(w, 6, 8).append(w, 4, 6).append(w, 2, 4).append(w, 0, 2);
        }
        String v6 = bytes.toString();
        if (v6.startsWith("00000000000000000000FFFF")) {
            // an IPv4 address on a dual-stack socket (::ffff:a.b.c.d), as the JDK binds them
            String v4 = v6.substring(24);
            return Integer.parseInt(v4.substring(0, 2), 16) + "." + Integer.parseInt(v4.substring(2, 4), 16) + "."
                    + Integer.parseInt(v4.substring(4, 6), 16) + "." + Integer.parseInt(v4.substring(6, 8), 16) + ":"
                    + port;
        }
        return "[" + v6 + "]:" + port;
    }
}
