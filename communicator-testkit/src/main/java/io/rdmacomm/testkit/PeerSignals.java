package io.rdmacomm.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The line channel from a peer process ({@link EchoPeerMain}, {@link PeerDeathMain}, {@link HoldConnectionsMain}) to
 * the test that started it: "serving at", "connected", "streaming". The test listens on a loopback port and names it
 * in the child's environment ({@value #ENV}); the child connects on its first {@link #send}. Signals do not travel on
 * the child's stdout, so nothing else a process may write there (a native library's log) can be mistaken for one or
 * delay one, and the kit's peers, being library code, print nothing.
 */
public final class PeerSignals implements AutoCloseable {
    /** The environment variable that carries the test's {@code host:port} to the child. */
    public static final String ENV = "RDMACOMM_PEER_SIGNALS";
    private static final int SLICE_MILLIS = 200;
    private static final int CONNECT_MILLIS = 10_000;
    private static OutputStream toTest;

    private final ServerSocket listener;
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
    private Process process;
    private Socket socket;
    private InputStream in;

    private PeerSignals(ServerSocket listener) {
        this.listener = listener;
    }

    /** A channel for one child, listening on 127.0.0.1. */
    public static PeerSignals listen() throws IOException {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        s.setSoTimeout(SLICE_MILLIS);
        return new PeerSignals(s);
    }

    /**
     * Starts {@code pb} with this channel named in its environment. Its stdout, where the builder leaves it a pipe
     * nobody reads, goes where its stderr goes when that is a file, and is discarded otherwise.
     */
    public Process start(ProcessBuilder pb) throws IOException {
        pb.environment().put(ENV, listener.getInetAddress().getHostAddress() + ":" + listener.getLocalPort());
        if (pb.redirectOutput() == ProcessBuilder.Redirect.PIPE && !pb.redirectErrorStream()) {
            pb.redirectOutput(pb.redirectError().file() != null
                    ? ProcessBuilder.Redirect.appendTo(pb.redirectError().file()) : ProcessBuilder.Redirect.DISCARD);
        }
        process = pb.start();
        return process;
    }

    /**
     * The child's next signal, waiting at most {@code seconds}; null once the child has closed the channel or has
     * ended without opening it.
     *
     * @throws TimeoutException when no whole signal came in time
     */
    public String next(long seconds) throws IOException, TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            boolean ended = process != null && !process.isAlive(); // before the wait: what it sent is queued by then
            try {
                if (socket == null) {
                    socket = listener.accept();
                    socket.setSoTimeout(SLICE_MILLIS);
                    in = new BufferedInputStream(socket.getInputStream());
                }
                for (int b; (b = in.read()) != '\n';) {
                    if (b < 0) {
                        return partial.size() > 0 ? take() : null;
                    }
                    partial.write(b);
                }
                return take();
            } catch (SocketTimeoutException e) {
                if (ended && socket == null) {
                    return null;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new TimeoutException("no signal from the peer process within " + seconds + " s"
                            + (partial.size() > 0 ? " (a part came: " + partial.toString(StandardCharsets.UTF_8) + ")"
                                    : ""));
                }
            }
        }
    }

    /** Skips signals until one starts with {@code prefix} and returns it; null if the child ended first. */
    public String await(String prefix, long seconds) throws IOException, TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            long left = TimeUnit.NANOSECONDS.toSeconds(deadline - System.nanoTime());
            String line = next(Math.max(1, left));
            if (line == null || line.startsWith(prefix)) {
                return line;
            }
        }
    }

    private String take() {
        String line = partial.toString(StandardCharsets.UTF_8);
        partial.reset();
        return line;
    }

    @Override
    public void close() throws IOException {
        try (listener) {
            if (socket != null) {
                socket.close();
            }
        }
    }

    /**
     * Sends {@code line} to the test that started this process (in the child). The first call connects to the
     * address in {@value #ENV}; the connection stays open until the process ends.
     *
     * @throws IllegalStateException when this process was not started by a {@link PeerSignals}
     */
    public static synchronized void send(String line) throws IOException {
        if (toTest == null) {
            String at = System.getenv(ENV);
            if (at == null || at.lastIndexOf(':') < 0) {
                throw new IllegalStateException(ENV + " names no host:port (got " + at
                        + "): this peer process reports to a test that starts it through PeerSignals");
            }
            int colon = at.lastIndexOf(':');
            Socket s = new Socket();
            s.connect(new InetSocketAddress(at.substring(0, colon), Integer.parseInt(at.substring(colon + 1))),
                    CONNECT_MILLIS);
            s.setTcpNoDelay(true);
            toTest = s.getOutputStream();
        }
        toTest.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        toTest.flush();
    }
}
