package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link IdleGuard} on a local:// pair: a call that waits for the client longer than the timeout closes the
 * session and fails naming the timeout; calls that each return, however many and however long the session lasts,
 * and the server's own time between calls do not count; the calls that never wait are forwarded as they are.
 */
@Timeout(30)
class IdleGuardTest {
    private static final Duration TIMEOUT = Duration.ofMillis(200);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private Communicator server;
    private Communicator client;
    private Communicator session;

    @BeforeEach
    void connect() throws Exception {
        server = Communicators.serve("local://idle-guard-" + UUID.randomUUID());
        CompletableFuture<Communicator> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return server.accept();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        client = Communicators.connect(server.endpoint().toString());
        session = accepted.get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws Exception {
        for (Communicator c : new Communicator[] {client, session, server}) {
            if (c != null) {
                c.close();
            }
        }
        timer.shutdownNow();
        assertTrue(timer.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void aReadTheClientNeverAnswersEndsAfterTheTimeout() throws Exception {
        Communicator guarded = IdleGuard.watch(session, TIMEOUT, timer);
        long start = System.nanoTime();
        IOException e = assertThrows(IOException.class, () -> guarded.read(ByteBuffer.allocate(1)));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        SocketTimeoutException t = assertInstanceOf(SocketTimeoutException.class, e, e.toString());
        assertTrue(t.getMessage().contains("kept the server waiting for 200 ms (idle timeout)"), t.getMessage());
        assertTrue(millis >= TIMEOUT.toMillis(), millis + " ms");
        assertFalse(session.isOpen(), "the session is closed");
        assertEquals(-1, client.read(ByteBuffer.allocate(1)), "the client sees the end");
    }

    @Test
    void callsThatReturnKeepTheSessionHoweverLongItLasts() throws Exception {
        Communicator guarded = IdleGuard.watch(session, TIMEOUT, timer);
        ByteBuffer b = ByteBuffer.allocate(8);
        long end = System.nanoTime() + 5 * TIMEOUT.toNanos();
        long echoes = 0;
        while (System.nanoTime() - end < 0) {
            client.write(ByteBuffer.allocate(8).putLong(0, echoes));
            client.sync();
            b.clear();
            guarded.readFully(b);
            b.flip();
            guarded.write(b);
            guarded.sync();
            ByteBuffer back = ByteBuffer.allocate(8);
            client.readFully(back);
            assertEquals(echoes, back.getLong(0));
            echoes++;
        }
        assertTrue(session.isOpen(), "a session whose every call returned at once was closed after " + echoes);
    }

    @Test
    void theServersOwnTimeBetweenCallsDoesNotCount() throws Exception {
        Communicator guarded = IdleGuard.watch(session, TIMEOUT, timer);
        client.write(ByteBuffer.allocate(4));
        client.sync();
        guarded.readFully(ByteBuffer.allocate(4));
        // the server works for three timeouts before its next call: nothing waits on the client meanwhile
        long until = System.nanoTime() + 3 * TIMEOUT.toNanos();
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
        assertTrue(session.isOpen(), "closed while the server itself was busy");
        guarded.write(ByteBuffer.allocate(4));
        guarded.sync();
        client.readFully(ByteBuffer.allocate(4));
    }

    @Test
    void theCallsThatNeverWaitAreForwarded() throws Exception {
        Communicator guarded = IdleGuard.watch(session, TIMEOUT, timer);
        assertEquals(0, guarded.available());
        client.write(ByteBuffer.allocate(10));
        client.sync();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (guarded.available() < 10 && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        assertEquals(10, guarded.available(), "available() is the session's");
        assertEquals(session.tryWrite(ByteBuffer.allocate(0)), guarded.tryWrite(ByteBuffer.allocate(0)));
    }
}
