package io.rdmacomm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketAddressesTest;

import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** Netty's test methods without a timeout of their own get this one. */
@Timeout(60)
class TcpSocketAddressesTest extends SocketAddressesTest {
    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return CommunicatorTestPermutation.socket("tcp");
    }

    @Override
    protected void assertAddress(SocketAddress address) {
        assertInstanceOf(InetSocketAddress.class, address);
    }

    @Override
    protected List<ByteBufAllocator> newAllocators() {
        return CommunicatorTestPermutation.allocators();
    }
}
