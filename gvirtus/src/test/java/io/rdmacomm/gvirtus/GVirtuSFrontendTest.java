package io.rdmacomm.gvirtus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Communicators;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class GVirtuSFrontendTest {

    @Test
    void callsShareOneConnectionRequestThenReply() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading(FramingTest.ECHO_REPLY + FramingTest.UNKNOWN_REPLY);
        GVirtuSFrontend f = new GVirtuSFrontend(peer.mock);
        GVirtuSResult echo = f.execute("echo", FramingTest.HELLO_POINTER);
        GVirtuSResult unknown = f.execute("noSuchRoutine", new byte[0]);
        assertEquals(new GVirtuSResult(0, 0.0, FramingTest.HELLO_POINTER), echo);
        assertEquals(-1, unknown.exitCode());
        assertEquals(FramingTest.ECHO_REQUEST + "6e6f53756368526f7574696e6500" + "0000000000000000",
                peer.writtenHex());
        verify(peer.mock, times(2)).sync();
        verify(peer.mock, never()).close();
    }

    @Test
    void aCallFailingMidExchangeClosesTheConnectionAndLaterCallsSayWhy() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading(FramingTest.ECHO_REPLY.substring(0, 30));
        GVirtuSFrontend f = new GVirtuSFrontend(peer.mock);
        EOFException first = assertThrows(EOFException.class, () -> f.execute("echo", FramingTest.HELLO_POINTER));
        assertTrue(first.getMessage().contains("reply header (exit code, elapsed seconds, output length) to request "
                + "'echo': 15 of 20 bytes arrived"), first.getMessage());
        verify(peer.mock).close();
        int written = peer.written.size();
        IOException later = assertThrows(IOException.class, () -> f.execute("fail", new byte[0]));
        assertTrue(later.getMessage().contains("is unusable: an earlier call failed mid-exchange ("
                + first.getMessage() + ")"), later.getMessage());
        assertEquals(written, peer.written.size(), "nothing may be written after the failure");
    }

    @Test
    void aReplyOverTheOutputLimitBreaksTheFrontend() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading(FramingTest.ECHO_REPLY);
        GVirtuSFrontend f = new GVirtuSFrontend(peer.mock, GVirtuSLimits.DEFAULT.withMaxOutputBytes(12));
        CommunicatorException e = assertThrows(CommunicatorException.class, () -> f.execute("echo", new byte[0]));
        assertTrue(e.getMessage().contains("output length 13 bytes exceeds maxOutputBytes 12 (exit code 0)"),
                e.getMessage());
        verify(peer.mock).close();
    }

    @Test
    void aRuntimeFailureOfTheCommunicatorAlsoBreaksTheFrontend() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading("");
        org.mockito.Mockito.doThrow(new IllegalStateException("not connected")).when(peer.mock).write(any());
        GVirtuSFrontend f = new GVirtuSFrontend(peer.mock);
        IOException e = assertThrows(IOException.class, () -> f.execute("echo", new byte[0]));
        assertTrue(e.getMessage().contains("call to 'echo' on scripted-peer failed"), e.getMessage());
        verify(peer.mock).close();
    }

    @Test
    void namesThatCannotGoOnTheWireAreRefusedWithoutTouchingIt() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading(FramingTest.UNKNOWN_REPLY);
        GVirtuSFrontend f = new GVirtuSFrontend(peer.mock);
        assertThrows(IllegalArgumentException.class, () -> f.execute("a\0b", new byte[0]));
        assertEquals(0, peer.written.size());
        assertEquals(-1, f.execute("ok", new byte[0]).exitCode()); // still usable
    }

    @Test
    void aCallerInterruptedWhileAnotherCallRunsLeavesTheFrontendUsable() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (GVirtuSBackend b = GVirtuSBackend.builder().registerAll(BuiltinRoutines.all())
                .register(TestRoutines.block(entered, release))
                .start(Communicators.serve("local://gvirtus-frontend-interrupt"));
                GVirtuSFrontend f = GVirtuSFrontend.connect(b.endpoint().toString())) {
            CompletableFuture<GVirtuSResult> running = CompletableFuture.supplyAsync(() -> {
                try {
                    return f.execute("block", new byte[0]);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            entered.await();
            AtomicReference<Throwable> waiterFailure = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    f.execute("fail", new byte[0]);
                } catch (Throwable t) {
                    waiterFailure.set(t);
                }
            });
            waiter.start();
            while (waiter.getState() != Thread.State.WAITING) {
                Thread.onSpinWait(); // parked on the frontend's lock behind the blocked call
            }
            waiter.interrupt();
            waiter.join();
            assertTrue(waiterFailure.get() instanceof InterruptedIOException, String.valueOf(waiterFailure.get()));
            release.countDown();
            assertEquals(0, running.get().exitCode());
            assertEquals(42, f.execute("fail", new byte[0]).exitCode());
        }
    }
}
