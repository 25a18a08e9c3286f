package io.rdmacomm.ucx.ffm;

/**
 * A libucp call failed. Carries the {@code ucs_status_t} value and UCX's own description of it
 * ({@code ucs_status_string}).
 */
public final class UcxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** {@code UCS_ERR_TIMED_OUT}: also used when a blocking call of this binding ran out of time. */
  public static final int TIMED_OUT = UcpConst.UCS_ERR_TIMED_OUT;
  /** {@code UCS_ERR_CANCELED}: the operation was cancelled, e.g. because its worker was closed. */
  public static final int CANCELED = UcpConst.UCS_ERR_CANCELED;
  /** {@code UCS_ERR_UNSUPPORTED}. */
  public static final int UNSUPPORTED = UcpConst.UCS_ERR_UNSUPPORTED;

  private final int status;
  private final String statusString;

  UcxException(String operation, int status) {
    this(operation, status, Native.statusString(status));
  }

  private UcxException(String operation, int status, String statusString) {
    super(operation + ": " + statusString + " (" + status + ")");
    this.status = status;
    this.statusString = statusString;
  }

  /** The {@code ucs_status_t} value, e.g. {@code -25} for {@code UCS_ERR_CONNECTION_RESET}. */
  public int status() {
    return status;
  }

  /** UCX's text for {@link #status()}. */
  public String statusString() {
    return statusString;
  }

  /** Throws unless {@code status} is {@code UCS_OK}. */
  static void check(int status, String operation) {
    if (status != UcpConst.UCS_OK) {
      throw new UcxException(operation, status);
    }
  }
}
