package io.rdmacomm.ucx.ffm;

import java.util.Optional;

/** Entry point for questions about the native library itself. */
public final class Ucx {
  private Ucx() {}

  /**
   * Why the binding cannot run in this JVM, or empty if it can. Never throws. The first call loads
   * libucp (clearing {@code UCX_ERROR_SIGNALS} first, see the package documentation). Reasons include:
   * libucp.so.0 not found (install libucx0), native access not enabled for this code, a libucp older than
   * 1.12 or not 1.x, a platform other than 64-bit little-endian Linux.
   */
  public static Optional<String> unavailabilityCause() {
    return Loader.cause();
  }

  /** Whether {@link #unavailabilityCause()} is empty. */
  public static boolean isAvailable() {
    return Loader.cause().isEmpty();
  }

  /**
   * The loaded libucp's version ({@code ucp_get_version}).
   *
   * @throws IllegalStateException with the {@linkplain #unavailabilityCause() cause} if it cannot run
   */
  public static UcxVersion version() {
    return Loader.version();
  }

  static void requireAvailable() {
    Loader.lookup();
  }
}
