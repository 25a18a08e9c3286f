package io.rdmacomm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.testsuite.transport.socket.WriteBeforeRegisteredTest;

import org.junit.jupiter.api.Timeout;

import java.util.List;

/** Netty's test methods without a timeout of their own get this one. */
@Timeout(60)
class RdmaWriteBeforeRegisteredTest extends WriteBeforeRegisteredTest {
    @Override
    protected List<BootstrapFactory<Bootstrap>> newFactories() {
        return CommunicatorTestPermutation.clientSocket("rdma");
    }

    @Override
    protected List<ByteBufAllocator> newAllocators() {
        return CommunicatorTestPermutation.allocators();
    }
}
