/*
 * Prints the sizes, field offsets and constant values of the libucp structs and enums that the Java
 * binding writes or reads, as compiled against the installed headers. StructLayoutTest compares every
 * line with the binding's own layouts (Structs) and constants (UcpConst).
 *
 * Output lines: "sizeof TYPE N", "offsetof TYPE FIELD.PATH N", "const NAME VALUE".
 */
#include <stddef.h>
#include <stdio.h>
#include <ucp/api/ucp.h>

#define SIZE(t) printf("sizeof %s %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("offsetof %s %s %zu\n", #t, #f, offsetof(t, f))
#define CONST(c) printf("const %s %lld\n", #c, (long long)(c))

int main(void) {
    SIZE(ucs_status_t);
    printf("signed ucs_status_t %d\n", (ucs_status_t)-1 < 0);
    SIZE(ucs_thread_mode_t);
    SIZE(ucp_err_handling_mode_t);

    SIZE(ucp_params_t);
    OFF(ucp_params_t, field_mask);
    OFF(ucp_params_t, features);
    OFF(ucp_params_t, request_size);
    OFF(ucp_params_t, request_init);
    OFF(ucp_params_t, request_cleanup);
    OFF(ucp_params_t, tag_sender_mask);
    OFF(ucp_params_t, mt_workers_shared);
    OFF(ucp_params_t, estimated_num_eps);
    OFF(ucp_params_t, estimated_num_ppn);
    OFF(ucp_params_t, name);

    SIZE(ucp_worker_params_t);
    OFF(ucp_worker_params_t, field_mask);
    OFF(ucp_worker_params_t, thread_mode);
    OFF(ucp_worker_params_t, cpu_mask);
    OFF(ucp_worker_params_t, events);
    OFF(ucp_worker_params_t, user_data);
    OFF(ucp_worker_params_t, event_fd);
    OFF(ucp_worker_params_t, flags);
    OFF(ucp_worker_params_t, name);
    OFF(ucp_worker_params_t, am_alignment);
    OFF(ucp_worker_params_t, client_id);

    SIZE(ucp_ep_params_t);
    OFF(ucp_ep_params_t, field_mask);
    OFF(ucp_ep_params_t, address);
    OFF(ucp_ep_params_t, err_mode);
    OFF(ucp_ep_params_t, err_handler);
    OFF(ucp_ep_params_t, err_handler.cb);
    OFF(ucp_ep_params_t, err_handler.arg);
    OFF(ucp_ep_params_t, user_data);
    OFF(ucp_ep_params_t, flags);
    OFF(ucp_ep_params_t, sockaddr);
    OFF(ucp_ep_params_t, sockaddr.addr);
    OFF(ucp_ep_params_t, sockaddr.addrlen);
    OFF(ucp_ep_params_t, conn_request);
    OFF(ucp_ep_params_t, name);
    OFF(ucp_ep_params_t, local_sockaddr);
    OFF(ucp_ep_params_t, local_sockaddr.addr);
    OFF(ucp_ep_params_t, local_sockaddr.addrlen);

    SIZE(ucp_listener_params_t);
    OFF(ucp_listener_params_t, field_mask);
    OFF(ucp_listener_params_t, sockaddr);
    OFF(ucp_listener_params_t, sockaddr.addr);
    OFF(ucp_listener_params_t, sockaddr.addrlen);
    OFF(ucp_listener_params_t, accept_handler);
    OFF(ucp_listener_params_t, accept_handler.cb);
    OFF(ucp_listener_params_t, accept_handler.arg);
    OFF(ucp_listener_params_t, conn_handler);
    OFF(ucp_listener_params_t, conn_handler.cb);
    OFF(ucp_listener_params_t, conn_handler.arg);

    SIZE(ucp_listener_attr_t);
    OFF(ucp_listener_attr_t, field_mask);
    OFF(ucp_listener_attr_t, sockaddr);
    OFF(ucp_listener_attr_t, sockaddr.ss_family);

    SIZE(ucp_conn_request_attr_t);
    OFF(ucp_conn_request_attr_t, field_mask);
    OFF(ucp_conn_request_attr_t, client_address);
    OFF(ucp_conn_request_attr_t, client_address.ss_family);
    OFF(ucp_conn_request_attr_t, client_id);

    SIZE(ucp_mem_map_params_t);
    OFF(ucp_mem_map_params_t, field_mask);
    OFF(ucp_mem_map_params_t, address);
    OFF(ucp_mem_map_params_t, length);
    OFF(ucp_mem_map_params_t, flags);
    OFF(ucp_mem_map_params_t, prot);
    OFF(ucp_mem_map_params_t, memory_type);

    SIZE(ucp_mem_attr_t);
    OFF(ucp_mem_attr_t, field_mask);
    OFF(ucp_mem_attr_t, address);
    OFF(ucp_mem_attr_t, length);
    OFF(ucp_mem_attr_t, mem_type);

    SIZE(ucp_request_param_t);
    OFF(ucp_request_param_t, op_attr_mask);
    OFF(ucp_request_param_t, flags);
    OFF(ucp_request_param_t, request);
    OFF(ucp_request_param_t, cb);
    OFF(ucp_request_param_t, datatype);
    OFF(ucp_request_param_t, user_data);
    OFF(ucp_request_param_t, reply_buffer);
    OFF(ucp_request_param_t, memory_type);
    OFF(ucp_request_param_t, recv_info);
    OFF(ucp_request_param_t, memh);

    SIZE(ucp_tag_recv_info_t);
    OFF(ucp_tag_recv_info_t, sender_tag);
    OFF(ucp_tag_recv_info_t, length);

    SIZE(ucp_am_handler_param_t);
    OFF(ucp_am_handler_param_t, field_mask);
    OFF(ucp_am_handler_param_t, id);
    OFF(ucp_am_handler_param_t, flags);
    OFF(ucp_am_handler_param_t, cb);
    OFF(ucp_am_handler_param_t, arg);

    SIZE(ucp_am_recv_param_t);
    OFF(ucp_am_recv_param_t, recv_attr);
    OFF(ucp_am_recv_param_t, reply_ep);

    CONST(UCS_OK);
    CONST(UCS_INPROGRESS);
    CONST(UCS_ERR_NO_MESSAGE);
    CONST(UCS_ERR_BUSY);
    CONST(UCS_ERR_CANCELED);
    CONST(UCS_ERR_TIMED_OUT);
    CONST(UCS_ERR_UNSUPPORTED);
    CONST(UCS_ERR_UNREACHABLE);
    CONST(UCS_ERR_LAST);
    CONST(UCS_THREAD_MODE_SINGLE);
    CONST(UCS_THREAD_MODE_SERIALIZED);
    CONST(UCS_THREAD_MODE_MULTI);
    CONST(UCP_PARAM_FIELD_FEATURES);
    CONST(UCP_PARAM_FIELD_MT_WORKERS_SHARED);
    CONST(UCP_PARAM_FIELD_NAME);
    CONST(UCP_FEATURE_TAG);
    CONST(UCP_FEATURE_RMA);
    CONST(UCP_FEATURE_WAKEUP);
    CONST(UCP_FEATURE_AM);
    CONST(UCP_WORKER_PARAM_FIELD_THREAD_MODE);
    CONST(UCP_EP_PARAM_FIELD_REMOTE_ADDRESS);
    CONST(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE);
    CONST(UCP_EP_PARAM_FIELD_ERR_HANDLER);
    CONST(UCP_EP_PARAM_FIELD_SOCK_ADDR);
    CONST(UCP_EP_PARAM_FIELD_FLAGS);
    CONST(UCP_EP_PARAM_FIELD_CONN_REQUEST);
    CONST(UCP_EP_PARAMS_FLAGS_CLIENT_SERVER);
    CONST(UCP_ERR_HANDLING_MODE_NONE);
    CONST(UCP_ERR_HANDLING_MODE_PEER);
    CONST(UCP_EP_CLOSE_FLAG_FORCE);
    CONST(UCP_LISTENER_PARAM_FIELD_SOCK_ADDR);
    CONST(UCP_LISTENER_PARAM_FIELD_CONN_HANDLER);
    CONST(UCP_LISTENER_ATTR_FIELD_SOCKADDR);
    CONST(UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR);
    CONST(UCP_MEM_MAP_PARAM_FIELD_ADDRESS);
    CONST(UCP_MEM_MAP_PARAM_FIELD_LENGTH);
    CONST(UCP_MEM_MAP_PARAM_FIELD_FLAGS);
    CONST(UCP_MEM_MAP_ALLOCATE);
    CONST(UCP_MEM_ATTR_FIELD_ADDRESS);
    CONST(UCP_MEM_ATTR_FIELD_LENGTH);
    CONST(UCP_AM_HANDLER_PARAM_FIELD_ID);
    CONST(UCP_AM_HANDLER_PARAM_FIELD_FLAGS);
    CONST(UCP_AM_HANDLER_PARAM_FIELD_CB);
    CONST(UCP_AM_FLAG_WHOLE_MSG);
    CONST(UCP_AM_SEND_FLAG_REPLY);
    CONST(UCP_AM_SEND_FLAG_EAGER);
    CONST(UCP_AM_SEND_FLAG_RNDV);
    CONST(UCP_AM_RECV_ATTR_FIELD_REPLY_EP);
    CONST(UCP_AM_RECV_ATTR_FLAG_DATA);
    CONST(UCP_AM_RECV_ATTR_FLAG_RNDV);
    CONST(UCP_OP_ATTR_FIELD_FLAGS);
    CONST(UCP_OP_ATTR_FIELD_RECV_INFO);
    /* the binding passes a smaller API version than the headers': it must not exceed them */
    CONST(UCP_API_MAJOR);
    CONST(UCP_API_MINOR);
    return 0;
}
