package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Channels connected by worker address and channel id (SPI v2's path), with no id exchange. */
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

    private static void send(FfmChannel from, String text) throws Exception {
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
        FfmNode node = FfmNode.acquire();
        FfmNode.acquire();
        Inbox inboxA = new Inbox();
        Inbox inboxB = new Inbox();
        FfmChannel a = node.newChannel("b", inboxA);
        FfmChannel b = node.newChannel("a", inboxB);
        try {
            byte[] address = node.address();
            node.connect(a, address, b.id());
            node.connect(b, address, a.id());
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
