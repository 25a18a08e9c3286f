package io.rdmacomm.systemtests;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;

/**
 * A client process that stops in the middle of a WRITE exchange: it registers memory of its own, puts one chunk into
 * the region the server advertised, waits for the server's acknowledgement, prints {@code holding} (the test's
 * signal that the server's region is in use) and then waits for ever, to be killed. Argument: the endpoint.
 */
final class HoldingWriteClient {
    static final String HOLDING = "holding";
    private static final int CHUNK = 64 * 1024;

    private HoldingWriteClient() {
    }

    public static void main(String[] args) throws Exception {
        Communicator peer = Communicators.connect(args[0]);
        SessionClient.open(peer, SessionRequest.oneSidedWrite(1L << 40));
        RegionDescriptor region = RegionDescriptor.readFrom(ExchangeResult.expectOk(peer, "write").body());
        peer.register(ByteBuffer.allocateDirect(1 << 20), Access.readWrite());
        int n = (int) Math.min(CHUNK, region.length());
        peer.put(ByteBuffer.allocateDirect(n), region, 0);
        SessionProtocol.writeNotification(peer, n);
        ExchangeResult.expectOk(peer, "first chunk");
        System.out.println(HOLDING);
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
