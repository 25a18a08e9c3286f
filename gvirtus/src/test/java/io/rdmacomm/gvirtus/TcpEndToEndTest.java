package io.rdmacomm.gvirtus;

/** {@link EndToEndTest} over {@code tcp://} on loopback: real sockets. */
class TcpEndToEndTest extends EndToEndTest {
    @Override
    String serverUri() {
        return "tcp://127.0.0.1:0";
    }
}
