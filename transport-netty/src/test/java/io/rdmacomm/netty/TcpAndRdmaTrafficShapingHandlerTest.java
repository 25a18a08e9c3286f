package io.rdmacomm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.TrafficShapingHandlerTest;

import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

/**
 * Both schemes in one class, unlike the others: the suite's class shuts its static executor down after its tests,
 * so a second subclass in the same JVM would find it gone.
 */
@Timeout(60)
class TcpAndRdmaTrafficShapingHandlerTest extends TrafficShapingHandlerTest {
    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> both = new ArrayList<>();
        both.addAll(CommunicatorTestPermutation.socket("tcp"));
        both.addAll(CommunicatorTestPermutation.socket("rdma"));
        return both;
    }

    @Override
    protected List<ByteBufAllocator> newAllocators() {
        return CommunicatorTestPermutation.allocators();
    }
}
