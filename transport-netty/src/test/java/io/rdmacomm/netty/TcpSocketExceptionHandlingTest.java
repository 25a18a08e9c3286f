package io.rdmacomm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketExceptionHandlingTest;

import io.netty.buffer.ByteBufAllocator;

import java.util.List;

class TcpSocketExceptionHandlingTest extends SocketExceptionHandlingTest {
    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return CommunicatorTestPermutation.socket("tcp");
    }

    @Override
    protected List<ByteBufAllocator> newAllocators() {
        return CommunicatorTestPermutation.allocators();
    }
}
