package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A peer JVM is SIGKILLed: the survivor's endpoint error handler fires and the survivor carries on. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PeerDeathTest {
  /**
   * UCX 1.13 keeps shared memory out of endpoints with peer error handling unless the mm transports are
   * told to expose it: by default such an endpoint between two processes on one host runs over tcp.
   */
  @Test
  void peerModeDefaultsToTcpOnOneHost() throws Exception {
    killedPeerIsReportedAndSurvivorKeepsWorking(Map.of(), "tcp/.*");
  }

  /**
   * With the mm transports' ERROR_HANDLING (UCX_POSIX_ERROR_HANDLING in the environment; through
   * ucp_config_modify it is MM_ERROR_HANDLING, the name inside the transport's table) the same endpoint
   * uses posix shared memory, and keepalive finds the dead peer.
   */
  @Test
  void peerModeOverSharedMemoryWithKeepalive() throws Exception {
    killedPeerIsReportedAndSurvivorKeepsWorking(Map.of("MM_ERROR_HANDLING", "y", "KEEPALIVE_INTERVAL", "200ms"),
        "(posix|sysv)/.*");
  }

  /** {@code amLane}: a regex for the transport of the endpoint's active-message lane. */
  private void killedPeerIsReportedAndSurvivorKeepsWorking(Map<String, String> config, String amLane)
      throws Exception {
    try (UcpContext context = UcpContext.create(EnumSet.allOf(UcpContext.Feature.class), config, false);
        UcpWorker survivor = context.newWorker(UcpWorker.ThreadMode.SINGLE);
        ServerSocket bootstrap = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int[] hellos = {0};
      survivor.setAmHandler(1, m -> hellos[0]++);
      Process child = startPeer(bootstrap.getLocalPort(), config);
      try (Socket socket = bootstrap.accept()) {
        socket.setSoTimeout(60_000);
        DataInputStream in = new DataInputStream(socket.getInputStream());
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        byte[] childAddress = in.readNBytes(in.readInt());
        byte[] mine = survivor.address();
        out.writeInt(mine.length);
        out.write(mine);
        out.flush();
        AtomicReference<UcxException> failure = new AtomicReference<>();
        UcpEndpoint toChild = survivor.connect(childAddress, UcpEndpoint.ErrorMode.PEER,
            (ep, cause) -> failure.set(cause));
        progressUntil(survivor, () -> hellos[0] == 1, 30);
        String lanes = toChild.describe();
        assertTrue(Pattern.compile("lane\\[\\d+\\]:\\s+\\d+:" + amLane + " am ").matcher(lanes).find(), lanes);
        // the child answers "ready" over the socket while it progresses; read it without blocking progress
        while (socket.getInputStream().available() == 0) {
          survivor.progress();
          assertTrue(child.isAlive(), "peer exited early");
        }
        assertEquals("ready", in.readUTF());

        child.destroyForcibly(); // SIGKILL
        assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        assertEquals(137, child.exitValue(), "peer must have died by SIGKILL, not by a crash");
        // the survivor notices once it talks to the dead peer or the transport sees the reset
        try (Arena arena = Arena.ofConfined()) {
          UcpRequest send = survivor.newRequest();
          toChild.amSend(1, MemorySegment.NULL, arena.allocate(8), 0, send);
          progressUntil(survivor, () -> failure.get() != null && send.isDone(), 60);
        }
        assertNotNull(failure.get());
        assertTrue(toChild.isFailed());
        assertNotEquals(0, toChild.failureStatus());
        toChild.close(UcpEndpoint.CloseMode.FLUSH, 10, TimeUnit.SECONDS);
      } finally {
        child.destroyForcibly();
      }
      assertSurvivorStillWorks(context, survivor);
    }
  }

  private static Process startPeer(int port, Map<String, String> config) throws Exception {
    String java = ProcessHandle.current().info().command().orElseThrow();
    List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xss1m",
        "-cp", System.getProperty("java.class.path"), PeerProcess.class.getName(), Integer.toString(port), "PEER"));
    config.forEach((k, v) -> command.add(k + "=" + v));
    ProcessBuilder pb = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(Path.of("target", "peer-process.log").toFile());
    // the child must clear it itself: the binding calls setenv before libucp loads
    pb.environment().remove("UCX_ERROR_SIGNALS");
    return pb.start();
  }

  private static void assertSurvivorStillWorks(UcpContext context, UcpWorker survivor) {
    try (UcpWorker other = context.newWorker(UcpWorker.ThreadMode.SINGLE); Arena arena = Arena.ofConfined()) {
      long[] got = {0};
      other.setAmHandler(2, m -> got[0] = Memory.readLong(m.dataAddress()));
      UcpEndpoint ep = survivor.connect(other.address(), UcpEndpoint.ErrorMode.PEER, null);
      MemorySegment data = arena.allocate(8);
      data.set(ValueLayout.JAVA_LONG, 0, 4242);
      UcpRequest send = survivor.newRequest();
      ep.amSend(2, MemorySegment.NULL, data, 0, send);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (got[0] != 4242 && System.nanoTime() < deadline) {
        survivor.progress();
        other.progress();
      }
      assertEquals(4242, got[0]);
      send.await(10, TimeUnit.SECONDS);
      UcpRequest close = survivor.newRequest();
      ep.close(UcpEndpoint.CloseMode.FORCE, close);
      while (!close.isDone() && System.nanoTime() < deadline) {
        survivor.progress();
        other.progress();
      }
      assertEquals(0, survivor.outstandingRequests());
    }
  }

  private static void progressUntil(UcpWorker worker, java.util.function.BooleanSupplier done, int seconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!done.getAsBoolean()) {
      worker.progress();
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not reached within " + seconds + " s");
      }
    }
  }
}
