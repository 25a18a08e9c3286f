package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A UCP application context ({@code ucp_context_h}): the transports UCX selected and the memory
 * registrations made through it. Create workers with {@link #newWorker(UcpWorker.ThreadMode)}.
 *
 * <p>Thread safety: creating workers and mapping memory may be done from any thread when the context was
 * created with {@code sharedWorkers} (UCX then locks the context); otherwise from one thread at a time,
 * which also applies to the workers' own threads.
 * {@link #close()} first closes, with a warning, any worker or memory mapping of the context still open.
 */
public final class UcpContext implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(UcpContext.class);

  /** UCP features to request ({@code UCP_FEATURE_*}). */
  public enum Feature {
    /** Tag matching send and receive. */
    TAG(UcpConst.UCP_FEATURE_TAG),
    /** One-sided put and get. */
    RMA(UcpConst.UCP_FEATURE_RMA),
    /** Event file descriptors and {@code ucp_worker_arm}/{@code ucp_worker_wait}. */
    WAKEUP(UcpConst.UCP_FEATURE_WAKEUP),
    /** Active messages. */
    AM(UcpConst.UCP_FEATURE_AM);

    final long bit;

    Feature(long bit) {
      this.bit = bit;
    }
  }

  private final long handle;
  private final boolean sharedWorkers;
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Workers and mappings still open: ucp_cleanup under them would leave dangling handles. */
  private final Set<AutoCloseable> children = ConcurrentHashMap.newKeySet();

  private UcpContext(long handle, boolean sharedWorkers) {
    this.handle = handle;
    this.sharedWorkers = sharedWorkers;
  }

  /** A context with every feature, UCX's configuration from the environment, workers used by one thread each. */
  public static UcpContext create() {
    return create(EnumSet.allOf(Feature.class), Map.of(), false);
  }

  /**
   * Creates a context.
   *
   * @param features      the features operations will need
   * @param config        UCX configuration overrides applied with {@code ucp_config_modify} on top of the
   *                      environment, keyed without the {@code UCX_} prefix (e.g. {@code "TLS" -> "tcp"})
   * @param sharedWorkers whether workers of this context will run on different threads
   *                      ({@code mt_workers_shared}: UCX then locks the context's shared state)
   * @throws IllegalStateException if the binding cannot run here ({@link Ucx#unavailabilityCause()})
   * @throws UcxException          if libucp refuses the configuration or fails to initialise
   */
  public static UcpContext create(Set<Feature> features, Map<String, String> config, boolean sharedWorkers) {
    Ucx.requireAvailable();
    long bits = 0;
    for (Feature f : features) {
      bits |= f.bit;
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
      UcxException.check(Native.configRead(out.address()), "ucp_config_read");
      long cfg = out.get(ValueLayout.JAVA_LONG, 0);
      try {
        for (Map.Entry<String, String> e : config.entrySet()) {
          int s = Native.configModify(cfg, arena.allocateFrom(e.getKey()).address(),
              arena.allocateFrom(e.getValue()).address());
          UcxException.check(s, "ucp_config_modify " + e.getKey() + "=" + e.getValue());
        }
        MemorySegment params = arena.allocate(Structs.UCP_PARAMS);
        long mask = UcpConst.UCP_PARAM_FIELD_FEATURES | UcpConst.UCP_PARAM_FIELD_MT_WORKERS_SHARED;
        params.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_PARAMS, "field_mask"), mask);
        params.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_PARAMS, "features"), bits);
        params.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_PARAMS, "mt_workers_shared"),
            sharedWorkers ? 1 : 0);
        int s = Native.initVersion(UcpConst.REQUESTED_API_MAJOR, UcpConst.REQUESTED_API_MINOR, params.address(),
            cfg, out.address());
        UcxException.check(s, "ucp_init_version");
      } finally {
        Native.configRelease(cfg);
      }
      long handle = out.get(ValueLayout.JAVA_LONG, 0);
      LOG.debug("context {} features {} config {}", Long.toHexString(handle), features, config);
      return new UcpContext(handle, sharedWorkers);
    }
  }

  /**
   * Creates a worker.
   *
   * @param mode how the worker itself may be used across threads; independent of {@code sharedWorkers},
   *             which is about different workers of this context running on different threads
   */
  public UcpWorker newWorker(UcpWorker.ThreadMode mode) {
    checkOpen();
    return adopt(new UcpWorker(this, mode));
  }

  /**
   * Registers existing native memory for RMA ({@code ucp_mem_map} with address and length). The segment
   * must stay alive until the returned mapping is closed.
   */
  public UcpMemory register(MemorySegment segment) {
    checkOpen();
    return adopt(UcpMemory.map(this, Memory.address(segment), segment.byteSize(), segment));
  }

  /** Has libucp allocate and register {@code size} bytes ({@code UCP_MEM_MAP_ALLOCATE}). */
  public UcpMemory allocate(long size) {
    checkOpen();
    if (size <= 0) {
      throw new IllegalArgumentException("size " + size);
    }
    return adopt(UcpMemory.map(this, 0, size, null));
  }

  /** Whether workers of this context may be used from several threads. */
  public boolean sharedWorkers() {
    return sharedWorkers;
  }

  long handle() {
    return handle;
  }

  private <T extends AutoCloseable> T adopt(T child) {
    children.add(child);
    return child;
  }

  void closed(AutoCloseable child) {
    children.remove(child);
  }

  void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("context closed");
    }
  }

  /** {@code ucp_cleanup}, after closing (with a warning) any worker or mapping still open. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      for (AutoCloseable child : children) {
        LOG.warn("context closed before its {}: closing it first", child.getClass().getSimpleName());
        try {
          child.close();
        } catch (Exception e) {
          LOG.warn("closing {} failed", child.getClass().getSimpleName(), e);
        }
      }
      Native.cleanup(handle);
    }
  }
}
