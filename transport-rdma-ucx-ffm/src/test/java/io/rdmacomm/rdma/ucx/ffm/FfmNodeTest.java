package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Channels of a client and a server node connected by worker address and channel id (SPI v2), no id exchange. */
@Timeout(30)
class FfmNodeTest {

    /** Keeps what arrives for one channel. */
    private static final class Inbox implements ChannelHandler {
        final LinkedBlockingQueue<Object> received = new LinkedBlockingQueue<>();

        @Override
        public void onMessage(ByteBuffer message) {
            received.add(StandardCharsets.UTF_8.decode(message.duplicate()).toString());
        }

        @Override
        public void onError(IOException cause) {
            received.add(cause);
        }
    }

    private static void send(RdmaChannel from, String text) throws Exception {
        CompletableFuture<Void> sent = new CompletableFuture<>();
        from.send(StandardCharsets.UTF_8.encode(text), new Completion() {
            @Override
            public void completed() {
                sent.complete(null);
            }

            @Override
            public void failed(IOException cause) {
                sent.completeExceptionally(cause);
            }
        });
        sent.get(10, TimeUnit.SECONDS);
    }

    @Test
    void channelsConnectedByWorkerAddressAndIdExchangeMessages() throws Exception {
        FfmProvider provider = new FfmProvider();
        InetAddress lo = InetAddress.getLoopbackAddress();
        Inbox inboxA = new Inbox();
        Inbox inboxB = new Inbox();
        try (RdmaNode client = provider.node(lo, RdmaChannel.Role.ACTIVE);
                RdmaNode server = provider.node(lo, RdmaChannel.Role.PASSIVE)) {
            RdmaChannel a = client.newChannel("b", inboxA);
            RdmaChannel b = server.newChannel("a", inboxB);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            try {
                a.connect(server.address(), b.localId(), RdmaChannel.Role.ACTIVE, deadline);
                b.connect(client.address(), a.localId(), RdmaChannel.Role.PASSIVE, deadline);
                send(a, "to b");
                send(b, "to a");
                assertEquals("to b", inboxB.received.poll(10, TimeUnit.SECONDS));
                assertEquals("to a", inboxA.received.poll(10, TimeUnit.SECONDS));
            } finally {
                a.close();
                b.close();
            }
        }
    }
}
