package io.rdmacomm.kvstore;

/** On rdma:// with UCX's default transports (shared memory between processes on this host). */
class KvRdmaProcessTest extends KvProcessTest {
    KvRdmaProcessTest() {
        super("rdma://127.0.0.1:0");
    }
}
