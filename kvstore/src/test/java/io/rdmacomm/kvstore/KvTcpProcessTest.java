package io.rdmacomm.kvstore;

class KvTcpProcessTest extends KvProcessTest {
    KvTcpProcessTest() {
        super("tcp://127.0.0.1:0");
    }
}
