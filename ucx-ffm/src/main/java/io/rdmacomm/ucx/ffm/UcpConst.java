package io.rdmacomm.ucx.ffm;

/**
 * The C enum and flag values the binding passes to or reads from libucp. Names are the C names on
 * purpose: {@code StructLayoutTest} compiles a C program against the installed headers and compares
 * every field here, by name, with the header's value.
 */
final class UcpConst {
  private UcpConst() {}

  static final int UCS_OK = 0;
  static final int UCS_INPROGRESS = 1;
  static final int UCS_ERR_NO_MESSAGE = -1;
  static final int UCS_ERR_BUSY = -15;
  static final int UCS_ERR_CANCELED = -16;
  static final int UCS_ERR_TIMED_OUT = -20;
  static final int UCS_ERR_UNSUPPORTED = -22;
  static final int UCS_ERR_UNREACHABLE = -6;
  static final int UCS_ERR_LAST = -100;

  static final int UCS_THREAD_MODE_SINGLE = 0;
  static final int UCS_THREAD_MODE_SERIALIZED = 1;
  static final int UCS_THREAD_MODE_MULTI = 2;

  static final long UCP_PARAM_FIELD_FEATURES = 1L << 0;
  static final long UCP_PARAM_FIELD_MT_WORKERS_SHARED = 1L << 5;
  static final long UCP_PARAM_FIELD_NAME = 1L << 8;

  static final long UCP_FEATURE_TAG = 1L << 0;
  static final long UCP_FEATURE_RMA = 1L << 1;
  static final long UCP_FEATURE_WAKEUP = 1L << 4;
  static final long UCP_FEATURE_AM = 1L << 6;

  static final long UCP_WORKER_PARAM_FIELD_THREAD_MODE = 1L << 0;

  static final long UCP_EP_PARAM_FIELD_REMOTE_ADDRESS = 1L << 0;
  static final long UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE = 1L << 1;
  static final long UCP_EP_PARAM_FIELD_ERR_HANDLER = 1L << 2;
  static final long UCP_EP_PARAM_FIELD_SOCK_ADDR = 1L << 4;
  static final long UCP_EP_PARAM_FIELD_FLAGS = 1L << 5;
  static final long UCP_EP_PARAM_FIELD_CONN_REQUEST = 1L << 6;
  static final int UCP_EP_PARAMS_FLAGS_CLIENT_SERVER = 1 << 0;
  static final int UCP_ERR_HANDLING_MODE_NONE = 0;
  static final int UCP_ERR_HANDLING_MODE_PEER = 1;
  static final int UCP_EP_CLOSE_FLAG_FORCE = 1 << 0;

  static final long UCP_LISTENER_PARAM_FIELD_SOCK_ADDR = 1L << 0;
  static final long UCP_LISTENER_PARAM_FIELD_CONN_HANDLER = 1L << 2;
  static final long UCP_LISTENER_ATTR_FIELD_SOCKADDR = 1L << 0;
  static final long UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR = 1L << 0;

  static final long UCP_MEM_MAP_PARAM_FIELD_ADDRESS = 1L << 0;
  static final long UCP_MEM_MAP_PARAM_FIELD_LENGTH = 1L << 1;
  static final long UCP_MEM_MAP_PARAM_FIELD_FLAGS = 1L << 2;
  static final int UCP_MEM_MAP_ALLOCATE = 1 << 1;
  static final long UCP_MEM_ATTR_FIELD_ADDRESS = 1L << 0;
  static final long UCP_MEM_ATTR_FIELD_LENGTH = 1L << 1;

  static final long UCP_AM_HANDLER_PARAM_FIELD_ID = 1L << 0;
  static final long UCP_AM_HANDLER_PARAM_FIELD_FLAGS = 1L << 1;
  static final long UCP_AM_HANDLER_PARAM_FIELD_CB = 1L << 2;
  static final int UCP_AM_FLAG_WHOLE_MSG = 1 << 0;
  static final int UCP_AM_SEND_FLAG_REPLY = 1 << 0;
  static final int UCP_AM_SEND_FLAG_EAGER = 1 << 1;
  static final int UCP_AM_SEND_FLAG_RNDV = 1 << 2;
  static final long UCP_AM_RECV_ATTR_FIELD_REPLY_EP = 1L << 0;
  static final long UCP_AM_RECV_ATTR_FLAG_DATA = 1L << 16;
  static final long UCP_AM_RECV_ATTR_FLAG_RNDV = 1L << 17;

  static final int UCP_OP_ATTR_FIELD_FLAGS = 1 << 4;
  static final int UCP_OP_ATTR_FIELD_RECV_INFO = 1 << 7;

  /** API version handed to {@code ucp_init_version}: the oldest libucp whose API this binding uses. */
  static final int REQUESTED_API_MAJOR = 1;
  static final int REQUESTED_API_MINOR = 12;
}
