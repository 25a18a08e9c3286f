package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * liveness on the engine, against the in-memory provider: heartbeats keep an idle connection up, a peer that hangs
 * (its messages stop, the provider reports nothing) fails blocked calls, and nothing fails when one side has
 * liveness off.
 */
@Timeout(60)
class EngineLivenessTest {
    /** Generous: the silence is noticed within liveness plus a check period; the machine may be loaded. */
    private static final long BOUND_SECONDS = 10;
    private final InMemoryProvider provider = new InMemoryProvider();
    private RdmaCommunicator server;
    private RdmaCommunicator client;
    private RdmaCommunicator accepted;

    private void open(String serverOptions, String clientOptions) throws IOException {
        server = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:0?" + serverOptions), provider);
        server.serve();
        client = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:" + server.endpoint().port() + "?"
                + clientOptions), provider);
        client.connect();
        accepted = (RdmaCommunicator) server.accept();
    }

    private InMemoryProvider.Chan serverChannel() {
        return provider.channels.values().stream().filter(c -> c.name.startsWith("server")).findFirst()
                .orElseThrow();
    }

    @AfterEach
    void closeAll() {
        provider.channels.values().forEach(InMemoryProvider.Chan::resume);
        for (RdmaCommunicator c : new RdmaCommunicator[] {client, accepted, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private CompletableFuture<Integer> readAsync(RdmaCommunicator c) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return c.read(ByteBuffer.allocateDirect(64));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
    }

    private static void assertSilenceFailure(CompletableFuture<?> call) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        SocketTimeoutException cause = assertInstanceOf(SocketTimeoutException.class, e.getCause().getCause(),
                e.toString());
        assertTrue(cause.getMessage().contains("sent nothing for 300ms (liveness)"), cause.getMessage());
    }

    @Test
    void aBlockedReadFailsWhenThePeerHangs() throws Exception {
        open("liveness=300ms", "liveness=300ms");
        CompletableFuture<Integer> read = readAsync(client);
        serverChannel().hang();
        assertSilenceFailure(read);
        SocketTimeoutException again = assertThrows(SocketTimeoutException.class,
                () -> client.write(ByteBuffer.allocateDirect(1)));
        assertTrue(again.getMessage().contains("(liveness)"), again.getMessage());
    }

    @Test
    void aWriteBlockedOnCreditsFailsWhenThePeerHangs() throws Exception {
        open("liveness=300ms&ringSize=64k", "liveness=300ms&ringSize=64k");
        serverChannel().hang();
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            ByteBuffer chunk = ByteBuffer.allocateDirect(256 * 1024);
            try {
                while (true) {
                    client.write(chunk.clear());
                    client.sync();
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        assertSilenceFailure(writer);
    }

    @Test
    void heartbeatsKeepAnIdleConnectionUp() throws Exception {
        open("liveness=300ms", "liveness=300ms");
        CompletableFuture<Integer> read = readAsync(accepted);
        // both sides idle for five times the liveness: only heartbeats cross
        assertThrows(TimeoutException.class, () -> read.get(1500, TimeUnit.MILLISECONDS));
        client.write(ByteBuffer.wrap(new byte[] {42}));
        client.sync();
        assertEquals(1, read.get(BOUND_SECONDS, TimeUnit.SECONDS));
    }

    @Test
    void livenessIsOffWhenThePeerDidNotAskForHeartbeats() throws Exception {
        open("liveness=0", "liveness=300ms");
        CompletableFuture<Integer> read = readAsync(client);
        assertThrows(TimeoutException.class, () -> read.get(1500, TimeUnit.MILLISECONDS));
        accepted.write(ByteBuffer.wrap(new byte[] {7}));
        accepted.sync();
        assertEquals(1, read.get(BOUND_SECONDS, TimeUnit.SECONDS));
    }
}
