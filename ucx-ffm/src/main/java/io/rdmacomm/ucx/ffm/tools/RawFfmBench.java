package io.rdmacomm.ucx.ffm.tools;

import io.rdmacomm.ucx.ffm.AmMessage;
import io.rdmacomm.ucx.ffm.UcpContext;
import io.rdmacomm.ucx.ffm.UcpEndpoint;
import io.rdmacomm.ucx.ffm.UcpRequest;
import io.rdmacomm.ucx.ffm.UcpWorker;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Ping-pong and streaming figures for the raw binding, to put beside {@code ucx_perftest}: two processes,
 * bootstrapped by exchanging worker addresses over a loopback TCP socket, busy-polling one worker each.
 *
 * <pre>
 * RawFfmBench serve     [--port 13370] [--once]
 * RawFfmBench latency   [--port 13370] [--api am|tag] [--size 8] [--iters 200000] [--warmup 20000]
 * RawFfmBench bandwidth [--port 13370] [--api am|tag] [--size 1048576] [--iters 2000] [--window 16]
 * common: [--error-mode none|peer] [--ucx KEY=VALUE,...]   (UCX settings without the UCX_ prefix)
 *         [--print-endpoint]   (ucp_ep_print_info of the client's endpoint on stderr: lanes, protocol thresholds)
 * </pre>
 *
 * The client prints one JSON line: round-trip percentiles in microseconds and half the median round
 * trip, which is what ucx_perftest calls latency (latency mode), or GB/s in 10^9 bytes/s (bandwidth mode),
 * and the heap bytes allocated per operation by the client's and the server's measuring threads.
 * Run with {@code --enable-native-access=ALL-UNNAMED}.
 */
public final class RawFfmBench {
  private static final int AM_DATA = 1;
  private static final int AM_ACK = 2;
  private static final long TAG_DATA = 1;
  private static final long TAG_ACK = 2;
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private final Map<String, String> options;
  private final UcpContext context;
  private final UcpWorker worker;
  private UcpEndpoint ep;
  private MemorySegment buffer;
  private UcpRequest[] slots;
  private int slot;
  private long messages;
  private long acks;
  private long failedReceives;

  private RawFfmBench(Map<String, String> options) {
    this.options = options;
    Map<String, String> ucx = new HashMap<>();
    for (String kv : option("ucx", "").split(",")) {
      if (!kv.isEmpty()) {
        String[] p = kv.split("=", 2);
        ucx.put(p[0], p[1]);
      }
    }
    this.context = UcpContext.create(EnumSet.of(UcpContext.Feature.AM, UcpContext.Feature.TAG), ucx, false);
    this.worker = context.newWorker(UcpWorker.ThreadMode.SINGLE);
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 0 || !Pattern.matches("serve|latency|bandwidth", args[0])) {
      System.err.println("usage: RawFfmBench serve|latency|bandwidth [--option value]... (see the class javadoc)");
      System.exit(2);
    }
    Map<String, String> options = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      String key = args[i].replaceFirst("^--", "");
      options.put(key, i + 1 < args.length && !args[i + 1].startsWith("--") ? args[++i] : "true");
    }
    RawFfmBench bench = new RawFfmBench(options);
    if (args[0].equals("serve")) {
      bench.serve();
    } else {
      System.out.println(bench.client(args[0]));
    }
    System.exit(0);
  }

  private String option(String key, String fallback) {
    return options.getOrDefault(key, fallback);
  }

  private int intOption(String key, int fallback) {
    return Integer.parseInt(option(key, Integer.toString(fallback)));
  }

  private UcpEndpoint.ErrorMode errorMode() {
    return UcpEndpoint.ErrorMode.valueOf(option("error-mode", "none").toUpperCase(Locale.ROOT));
  }

  /** Exchanges worker addresses and the run's parameters; the client speaks first. */
  private String[] bootstrap(Socket socket, String[] run) throws IOException {
    DataOutputStream out = new DataOutputStream(socket.getOutputStream());
    DataInputStream in = new DataInputStream(socket.getInputStream());
    byte[] mine = worker.address();
    out.writeInt(mine.length);
    out.write(mine);
    out.writeUTF(String.join(" ", run));
    out.flush();
    byte[] theirs = in.readNBytes(in.readInt());
    String[] theirRun = in.readUTF().split(" ");
    ep = worker.connect(theirs, errorMode(), (e, cause) -> System.err.println("endpoint failed: " + cause));
    return run.length > 0 ? run : theirRun;
  }

  private void serve() throws IOException {
    try (ServerSocket server = new ServerSocket(intOption("port", 13370), 4, InetAddress.getLoopbackAddress())) {
      do {
        try (Socket socket = server.accept()) {
          String[] run = bootstrap(socket, new String[0]);
          long allocated = serveRun(run[0], run[1], Integer.parseInt(run[2]), Integer.parseInt(run[3]),
              Integer.parseInt(run[4]), Integer.parseInt(run[5]));
          DataOutputStream out = new DataOutputStream(socket.getOutputStream());
          out.writeLong(allocated);
          out.flush();
          closeEndpoint();
        }
      } while (!options.containsKey("once"));
    }
  }

  private String client(String mode) throws IOException {
    String api = option("api", "am");
    boolean latency = mode.equals("latency");
    int size = intOption("size", latency ? 8 : 1 << 20);
    int iters = intOption("iters", latency ? 200_000 : 2_000);
    int warmup = intOption("warmup", latency ? 20_000 : 200);
    int window = intOption("window", 16);
    try (Socket socket = connect(intOption("port", 13370))) {
      bootstrap(socket, new String[] {mode, api, Integer.toString(size), Integer.toString(iters + warmup),
          Integer.toString(window), Integer.toString(warmup)});
      prepare(api, size, window);
      String result = latency ? latency(api, iters, warmup) : bandwidth(api, size, iters, warmup, window);
      long serverAllocated = new DataInputStream(socket.getInputStream()).readLong();
      String info = ep.describe();
      if (options.containsKey("print-endpoint")) {
        System.err.print(info);
      }
      String lanes = lanes(info);
      closeEndpoint();
      return String.format(Locale.ROOT, "{\"tool\":\"RawFfmBench\",\"mode\":\"%s\",\"api\":\"%s\",\"size\":%d,"
          + "\"iters\":%d,\"error_mode\":\"%s\",\"lanes\":\"%s\",%s,\"server_alloc_bytes_per_op\":%.3f}",
          mode, api, size, iters, errorMode().name().toLowerCase(Locale.ROOT), lanes, result,
          serverAllocated / (double) iters);
    }
  }

  /** Connects to the server, which may still be starting: retries for up to 30 seconds. */
  private static Socket connect(int port) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return new Socket(InetAddress.getLoopbackAddress(), port);
      } catch (ConnectException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
      }
    }
  }

  private void prepare(String api, int size, int window) {
    if (buffer == null || buffer.byteSize() < size) {
      buffer = Arena.global().allocate(Math.max(size, 8), 64);
    }
    pongData = buffer.asSlice(0, size);
    // requests live as long as the worker: a serving loop reuses them from run to run
    if (slots == null || slots.length != window) {
      slots = new UcpRequest[window];
      for (int i = 0; i < window; i++) {
        slots[i] = worker.newRequest();
      }
    }
    if (replies == null) {
      replies = new UcpRequest[16];
      for (int i = 0; i < replies.length; i++) {
        replies[i] = worker.newRequest();
      }
    }
    if (api.equals("am")) {
      worker.setAmHandler(AM_DATA, this::onData);
      worker.setAmHandler(AM_ACK, m -> acks++);
    }
  }

  /**
   * Server side of both modes: pong every message (latency) or receive them all, then acknowledge once.
   * Returns the heap bytes this thread allocated from the end of the client's warm-up to the last message.
   */
  private long serveRun(String mode, String api, int size, int total, int window, int warmup) {
    prepare(api, size, window);
    pong = mode.equals("latency");
    long before = -1;
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
    if (api.equals("am")) {
      while (messages < total) {
        if (before < 0 && messages >= warmup) {
          before = THREADS.getCurrentThreadAllocatedBytes();
        }
        worker.progress();
        checkDeadline(deadline);
      }
    } else {
      int posted = 0;
      for (; posted < Math.min(pong ? 1 : window, total); posted++) {
        worker.tagRecv(pongData, TAG_DATA, -1L, slots[posted % window]);
      }
      while (messages < total) {
        if (before < 0 && messages >= warmup) {
          before = THREADS.getCurrentThreadAllocatedBytes();
        }
        UcpRequest r = slots[(int) (messages % (pong ? 1 : window))];
        if (r.isDone()) {
          messages++;
          if (pong) {
            ep.tagSend(TAG_DATA, pongData, reply());
          }
          if (posted < total) {
            worker.tagRecv(pongData, TAG_DATA, -1L, r);
            posted++;
          }
        } else {
          worker.progress();
        }
        checkDeadline(deadline);
      }
    }
    drain(deadline);
    long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
    if (!pong) {
      send(api, AM_ACK, TAG_ACK, MemorySegment.NULL);
      drain(deadline);
    }
    return allocated;
  }

  private boolean pong;
  private UcpRequest[] replies;
  private int replyIndex;
  private MemorySegment pongData;

  /** AM handler on both sides: the server pongs or receives rendezvous data; the client counts pongs. */
  private void onData(AmMessage m) {
    messages++;
    if (m.isRendezvous()) {
      UcpRequest r = slots[slot++ % slots.length];
      if (!r.isDone()) {
        failedReceives++; // window overrun: cannot progress inside a callback, so the message is dropped
        return;
      }
      m.receiveData(pongData, r);
    }
    if (pong) {
      ep.amSend(AM_DATA, MemorySegment.NULL, pongData, 0, reply());
    }
  }

  /** A finished request from the reply ring; replies go out from callbacks, where waiting is impossible. */
  private UcpRequest reply() {
    for (int i = 0; i < replies.length; i++) {
      UcpRequest r = replies[replyIndex++ % replies.length];
      if (r.isDone()) {
        return r;
      }
    }
    throw new IllegalStateException(replies.length + " replies still in flight");
  }

  private void send(String api, int id, long tag, MemorySegment data) {
    if (api.equals("am")) {
      ep.amSend(id, MemorySegment.NULL, data, 0, reply());
    } else {
      ep.tagSend(tag, data, reply());
    }
  }

  private String latency(String api, int iters, int warmup) {
    long[] rtt = new long[iters];
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
    UcpRequest recv = slots[0];
    UcpRequest sent = worker.newRequest();
    long before = 0;
    for (int i = -warmup; i < iters; i++) {
      if (i == 0) {
        before = THREADS.getCurrentThreadAllocatedBytes();
      }
      long start = System.nanoTime();
      if (api.equals("am")) {
        long want = messages + 1;
        ep.amSend(AM_DATA, MemorySegment.NULL, pongData, 0, sent);
        while (messages < want || !sent.isDone()) {
          worker.progress();
        }
      } else {
        worker.tagRecv(pongData, TAG_DATA, -1L, recv);
        ep.tagSend(TAG_DATA, pongData, sent);
        while (!recv.isDone() || !sent.isDone()) {
          worker.progress();
        }
      }
      if (i >= 0) {
        rtt[i] = System.nanoTime() - start;
      }
      checkDeadline(deadline);
    }
    long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
    double mean = Arrays.stream(rtt).average().orElse(0);
    Arrays.sort(rtt);
    // ucx_perftest reports half the round trip as "latency": half_rtt_p50_us is the figure to set beside it
    return String.format(Locale.ROOT, "\"rtt_p50_us\":%.3f,\"rtt_p99_us\":%.3f,\"rtt_min_us\":%.3f,"
        + "\"half_rtt_p50_us\":%.3f,\"half_rtt_mean_us\":%.3f,\"alloc_bytes_per_op\":%.3f", rtt[iters / 2] / 1e3,
        rtt[(int) (iters * 0.99)] / 1e3, rtt[0] / 1e3, rtt[iters / 2] / 2e3, mean / 2e3, allocated / (double) iters);
  }

  private String bandwidth(String api, int size, int iters, int warmup, int window) {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
    long start = 0;
    long before = 0;
    for (int i = -warmup; i < iters; i++) {
      if (i == 0) {
        start = System.nanoTime();
        before = THREADS.getCurrentThreadAllocatedBytes();
      }
      UcpRequest r = slots[Math.floorMod(i, window)];
      while (!r.isDone()) {
        worker.progress();
        checkDeadline(deadline);
      }
      r.check();
      if (api.equals("am")) {
        ep.amSend(AM_DATA, MemorySegment.NULL, pongData, 0, r);
      } else {
        ep.tagSend(TAG_DATA, pongData, r);
      }
    }
    // the acknowledgement's first-time path (its handler's first upcall) is not part of the steady state
    long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
    UcpRequest ack = worker.newRequest();
    if (api.equals("tag")) {
      worker.tagRecv(buffer, TAG_ACK, -1L, ack);
    }
    while (!(api.equals("am") ? acks > 0 : ack.isDone())) {
      worker.progress();
      checkDeadline(deadline);
    }
    long elapsed = System.nanoTime() - start;
    drain(deadline);
    return String.format(Locale.ROOT, "\"gbps\":%.3f,\"msg_per_s\":%.0f,\"window\":%d,\"alloc_bytes_per_op\":%.3f",
        (double) size * iters / elapsed, iters * 1e9 / elapsed, window, allocated / (double) iters);
  }

  /** Progresses until every request slot has finished. */
  private void drain(long deadline) {
    for (UcpRequest r : slots) {
      while (!r.isDone()) {
        worker.progress();
        checkDeadline(deadline);
      }
    }
    for (UcpRequest r : replies) {
      while (!r.isDone()) {
        worker.progress();
        checkDeadline(deadline);
      }
    }
    if (failedReceives > 0) {
      throw new IllegalStateException(failedReceives + " rendezvous messages dropped: window too small");
    }
  }

  private static void checkDeadline(long deadline) {
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException("run did not finish within 10 minutes");
    }
  }

  private void closeEndpoint() {
    UcpRequest close = worker.newRequest();
    ep.close(UcpEndpoint.CloseMode.FORCE, close);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!close.isDone() && System.nanoTime() < deadline) {
      worker.progress();
    }
    messages = 0;
    acks = 0;
    slot = 0;
  }

  /** The transport/device of each lane, from ucp_ep_print_info: e.g. "sysv/memory,cma/memory". */
  static String lanes(String info) {
    StringBuilder sb = new StringBuilder();
    Matcher m = Pattern.compile("lane\\[\\d+\\]:\\s+\\d+:(\\S+?)\\.\\d+ ").matcher(info);
    while (m.find()) {
      sb.append(sb.isEmpty() ? "" : ",").append(m.group(1));
    }
    return sb.toString();
  }
}
