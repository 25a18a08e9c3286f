package io.rdmacomm.ucx.ffm;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.Socket;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The peer {@link PeerDeathTest} kills. Arguments: bootstrap port, error mode, UCX settings as KEY=VALUE.
 * Connects to the test's worker over a loopback socket bootstrap, sends one active message, provokes
 * NullPointerExceptions (the JVM raises them through SIGSEGV, which UCX must not have taken over; the test
 * starts this JVM without UCX_ERROR_SIGNALS), tells the test it is ready and progresses until killed.
 */
public final class PeerProcess {
  private PeerProcess() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        UcpContext context = UcpContext.create(EnumSet.allOf(UcpContext.Feature.class), config(args), false);
        UcpWorker worker = context.newWorker(UcpWorker.ThreadMode.SINGLE);
        Arena arena = Arena.ofConfined()) {
      DataInputStream in = new DataInputStream(socket.getInputStream());
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      byte[] mine = worker.address();
      out.writeInt(mine.length);
      out.write(mine);
      out.flush();
      byte[] theirs = in.readNBytes(in.readInt());
      UcpEndpoint.ErrorMode mode = UcpEndpoint.ErrorMode.valueOf(args[1]);
      UcpEndpoint ep = worker.connect(theirs, mode, null);
      UcpRequest request = worker.newRequest();
      ep.amSend(1, MemorySegment.NULL, arena.allocate(8), 0, request);
      request.await(10, TimeUnit.SECONDS);
      provokeImplicitNullChecks();
      out.writeUTF("ready");
      out.flush();
      while (true) {
        worker.progress();
      }
    }
  }

  /** UCX settings after the port and error mode, as KEY=VALUE. */
  static Map<String, String> config(String[] args) {
    Map<String, String> config = new HashMap<>();
    for (int i = 2; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      config.put(kv[0], kv[1]);
    }
    return config;
  }

  private static void provokeImplicitNullChecks() {
    String[] values = {"x", null};
    int caught = 0;
    for (int i = 0; i < 200_000; i++) {
      try {
        caught += values[i & 1].length() == 1 ? 0 : 1;
      } catch (NullPointerException e) {
        caught++;
      }
    }
    if (caught != 100_000) {
      throw new AssertionError("caught " + caught);
    }
  }
}
