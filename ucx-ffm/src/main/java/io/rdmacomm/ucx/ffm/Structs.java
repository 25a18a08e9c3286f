package io.rdmacomm.ucx.ffm;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.util.List;

/**
 * The libucp structs the binding fills or reads, as FFM layouts whose names are the C type and field
 * names (nested structs keep their member names), so that {@code StructLayoutTest} can match every
 * field against {@code offsetof} from the installed headers. Later 1.x headers only append fields, so
 * a struct sized for 1.13 with unset {@code field_mask} bits is valid for every supported release.
 */
final class Structs {
  private Structs() {}

  private static final StructLayout SOCK_ADDR = structLayout(
      ADDRESS.withName("addr"), JAVA_INT.withName("addrlen"), paddingLayout(4));

  private static final StructLayout SOCKADDR_STORAGE = structLayout(
      JAVA_SHORT.withName("ss_family"), paddingLayout(126)).withByteAlignment(8);

  static final StructLayout UCP_PARAMS = structLayout(
      JAVA_LONG.withName("field_mask"),
      JAVA_LONG.withName("features"),
      JAVA_LONG.withName("request_size"),
      ADDRESS.withName("request_init"),
      ADDRESS.withName("request_cleanup"),
      JAVA_LONG.withName("tag_sender_mask"),
      JAVA_INT.withName("mt_workers_shared"), paddingLayout(4),
      JAVA_LONG.withName("estimated_num_eps"),
      JAVA_LONG.withName("estimated_num_ppn"),
      ADDRESS.withName("name")).withName("ucp_params_t");

  static final StructLayout UCP_WORKER_PARAMS = structLayout(
      JAVA_LONG.withName("field_mask"),
      JAVA_INT.withName("thread_mode"), paddingLayout(4),
      sequenceLayout(16, JAVA_LONG).withName("cpu_mask"),
      JAVA_INT.withName("events"), paddingLayout(4),
      ADDRESS.withName("user_data"),
      JAVA_INT.withName("event_fd"), paddingLayout(4),
      JAVA_LONG.withName("flags"),
      ADDRESS.withName("name"),
      JAVA_LONG.withName("am_alignment"),
      JAVA_LONG.withName("client_id")).withName("ucp_worker_params_t");

  static final StructLayout UCP_EP_PARAMS = structLayout(
      JAVA_LONG.withName("field_mask"),
      ADDRESS.withName("address"),
      JAVA_INT.withName("err_mode"), paddingLayout(4),
      structLayout(ADDRESS.withName("cb"), ADDRESS.withName("arg")).withName("err_handler"),
      ADDRESS.withName("user_data"),
      JAVA_INT.withName("flags"), paddingLayout(4),
      SOCK_ADDR.withName("sockaddr"),
      ADDRESS.withName("conn_request"),
      ADDRESS.withName("name"),
      SOCK_ADDR.withName("local_sockaddr")).withName("ucp_ep_params_t");

  static final StructLayout UCP_LISTENER_PARAMS = structLayout(
      JAVA_LONG.withName("field_mask"),
      SOCK_ADDR.withName("sockaddr"),
      structLayout(ADDRESS.withName("cb"), ADDRESS.withName("arg")).withName("accept_handler"),
      structLayout(ADDRESS.withName("cb"), ADDRESS.withName("arg")).withName("conn_handler"))
      .withName("ucp_listener_params_t");

  static final StructLayout UCP_LISTENER_ATTR = structLayout(
      JAVA_LONG.withName("field_mask"),
      SOCKADDR_STORAGE.withName("sockaddr")).withName("ucp_listener_attr_t");

  static final StructLayout UCP_CONN_REQUEST_ATTR = structLayout(
      JAVA_LONG.withName("field_mask"),
      SOCKADDR_STORAGE.withName("client_address"),
      JAVA_LONG.withName("client_id")).withName("ucp_conn_request_attr_t");

  static final StructLayout UCP_MEM_MAP_PARAMS = structLayout(
      JAVA_LONG.withName("field_mask"),
      ADDRESS.withName("address"),
      JAVA_LONG.withName("length"),
      JAVA_INT.withName("flags"),
      JAVA_INT.withName("prot"),
      JAVA_INT.withName("memory_type"), paddingLayout(4)).withName("ucp_mem_map_params_t");

  static final StructLayout UCP_MEM_ATTR = structLayout(
      JAVA_LONG.withName("field_mask"),
      ADDRESS.withName("address"),
      JAVA_LONG.withName("length"),
      JAVA_INT.withName("mem_type"), paddingLayout(4)).withName("ucp_mem_attr_t");

  static final StructLayout UCP_REQUEST_PARAM = structLayout(
      JAVA_INT.withName("op_attr_mask"),
      JAVA_INT.withName("flags"),
      ADDRESS.withName("request"),
      ADDRESS.withName("cb"),
      JAVA_LONG.withName("datatype"),
      ADDRESS.withName("user_data"),
      ADDRESS.withName("reply_buffer"),
      JAVA_INT.withName("memory_type"), paddingLayout(4),
      ADDRESS.withName("recv_info"),
      ADDRESS.withName("memh")).withName("ucp_request_param_t");

  static final StructLayout UCP_TAG_RECV_INFO = structLayout(
      JAVA_LONG.withName("sender_tag"),
      JAVA_LONG.withName("length")).withName("ucp_tag_recv_info_t");

  static final StructLayout UCP_AM_HANDLER_PARAM = structLayout(
      JAVA_LONG.withName("field_mask"),
      JAVA_INT.withName("id"),
      JAVA_INT.withName("flags"),
      ADDRESS.withName("cb"),
      ADDRESS.withName("arg")).withName("ucp_am_handler_param_t");

  static final StructLayout UCP_AM_RECV_PARAM = structLayout(
      JAVA_LONG.withName("recv_attr"),
      ADDRESS.withName("reply_ep")).withName("ucp_am_recv_param_t");

  /** Every layout above, for the header comparison. */
  static final List<StructLayout> ALL = List.of(UCP_PARAMS, UCP_WORKER_PARAMS, UCP_EP_PARAMS, UCP_LISTENER_PARAMS,
      UCP_LISTENER_ATTR, UCP_CONN_REQUEST_ATTR, UCP_MEM_MAP_PARAMS, UCP_MEM_ATTR, UCP_REQUEST_PARAM,
      UCP_TAG_RECV_INFO, UCP_AM_HANDLER_PARAM, UCP_AM_RECV_PARAM);

  /** Byte offset of a (possibly nested) field, e.g. {@code offset(UCP_EP_PARAMS, "err_handler", "cb")}. */
  static long offset(MemoryLayout layout, String... path) {
    PathElement[] elements = new PathElement[path.length];
    for (int i = 0; i < path.length; i++) {
      elements[i] = PathElement.groupElement(path[i]);
    }
    return layout.byteOffset(elements);
  }

  // Offsets used by the hot path, resolved once.
  static final long REQ_OP_ATTR_MASK = offset(UCP_REQUEST_PARAM, "op_attr_mask");
  static final long REQ_FLAGS = offset(UCP_REQUEST_PARAM, "flags");
  static final long REQ_DATATYPE = offset(UCP_REQUEST_PARAM, "datatype");
  static final long REQ_RECV_INFO = offset(UCP_REQUEST_PARAM, "recv_info");
  static final long TAG_INFO_SENDER_TAG = offset(UCP_TAG_RECV_INFO, "sender_tag");
  static final long TAG_INFO_LENGTH = offset(UCP_TAG_RECV_INFO, "length");
  static final long AM_RECV_ATTR = offset(UCP_AM_RECV_PARAM, "recv_attr");
  static final long AM_REPLY_EP = offset(UCP_AM_RECV_PARAM, "reply_ep");
}
