package io.rdmacomm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketSslSessionReuseTest;

import org.junit.jupiter.api.Timeout;

import java.util.List;

/** Netty's test methods without a timeout of their own get this one. */
@Timeout(60)
class RdmaSocketSslSessionReuseTest extends SocketSslSessionReuseTest {
    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return CommunicatorTestPermutation.socket("rdma");
    }

    @Override
    protected List<ByteBufAllocator> newAllocators() {
        return CommunicatorTestPermutation.allocators();
    }
}
