package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The kit must catch real bugs: each case runs one kit scenario against the local transport with one
 * deliberately planted defect and expects that scenario to fail with a message naming the defect. The broken
 * transports are static nested classes, which the build's test scan does not run by itself.
 */
@Timeout(60)
class KitSelfTest {
    private static final CountDownLatch RELEASE_LEAKED = new CountDownLatch(1);

    @AfterAll
    static void releaseLeakedThreads() {
        RELEASE_LEAKED.countDown();
    }

    private static String failureOf(Class<?> kit, String scenario) {
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectMethod(kit, scenario)).build(), listener);
        TestExecutionSummary s = listener.getSummary();
        assertEquals(1, s.getTestsFoundCount(), kit.getSimpleName() + "." + scenario + " was not found");
        assertEquals(1, s.getTestsFailedCount(), "the kit did not notice the defect planted in "
                + kit.getSimpleName() + ": " + scenario + " passed");
        return s.getFailures().stream().map(f -> String.valueOf(f.getException()))
                .collect(Collectors.joining("\n"));
    }

    @Test
    void anUnavailableTransportIsSkippedOrFailsOnCi() {
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectMethod(Unavailable.class, "misuseIsAnIllegalStateException")).build(), listener);
        TestExecutionSummary s = listener.getSummary();
        boolean ci = "true".equalsIgnoreCase(System.getenv("CI"));
        assertEquals(ci ? 0 : 1, s.getTestsAbortedCount(), "aborted (skipped) with CI=" + System.getenv("CI"));
        assertEquals(ci ? 1 : 0, s.getTestsFailedCount(), "failed with CI=" + System.getenv("CI"));
        assertEquals(0, s.getTestsSucceededCount());
    }

    @Test
    void aSchemeWithoutProviderHasASkipReasonNamingIt() {
        Optional<String> why = TransportUnderTest.of("nosuch://127.0.0.1:0").skipReason();
        assertTrue(why.isPresent() && why.get().contains("nosuch://"), String.valueOf(why));
        assertEquals(Optional.empty(), TransportUnderTest.local().skipReason());
    }

    @Test
    void lostBytesFailTheIntegrityScenario() {
        String why = failureOf(DropsLastByte.class, "orderAndIntegrityOverSixtyFourMiBOfRandomlySizedWrites");
        assertTrue(why.contains("bytes received"), why);
    }

    @Test
    void aSwallowedAsynchronousCloseFailsTheAsyncCloseScenario() {
        String why = failureOf(ReadReturnsEndOfStreamOnClose.class, "asyncCloseUnblocksABlockedRead");
        assertTrue(why.contains("expected the task to fail, it returned -1"), why);
    }

    @Test
    void aConnectErrorThatDoesNotNameTheEndpointFails() {
        String why = failureOf(AnonymousConnectErrors.class, "refusedConnectThrowsConnectExceptionNamingTheEndpoint");
        assertTrue(why.contains("must name"), why);
    }

    @Test
    void aTransportThreadOutlivingCloseIsListedByName() {
        String why = failureOf(LeaksAThread.class, "serveReportsTheBoundEndpointAndAcceptsAClient");
        assertTrue(why.contains("rdmacomm-local-leak"), why);
    }

    @Test
    void aRemoteAccessErrorOfTheWrongTypeFails() {
        String why = failureOf(WrongRemoteErrorType.class, "outOfBoundsAccessIsRefusedAndTheConnectionStaysUsable");
        assertTrue(why.contains("RemoteAccessException"), why);
    }

    /** A communicator with a defect; the accepted side carries the same defect. */
    private abstract static class Defect extends ForwardingCommunicator {
        Defect(Communicator delegate) {
            super(delegate);
        }

        abstract Communicator wrap(Communicator c);

        @Override
        public Communicator accept() throws IOException {
            return wrap(delegate.accept());
        }
    }

    static final class Unavailable extends CommunicatorContractTest {
        Unavailable() {
            super(TransportUnderTest.local().withSkipReason(() -> Optional.of("libexample.so is missing")));
        }
    }

    static final class DropsLastByte extends CommunicatorContractTest {
        DropsLastByte() {
            super(TransportUnderTest.local().withWrapper(Bug::new));
        }

        private static final class Bug extends Defect {
            Bug(Communicator c) {
                super(c);
            }

            @Override
            Communicator wrap(Communicator c) {
                return new Bug(c);
            }

            @Override
            public void write(ByteBuffer src) throws IOException {
                if (src.remaining() > 1000) {
                    src.limit(src.limit() - 1);
                    delegate.write(src);
                    src.limit(src.limit() + 1).position(src.limit());
                } else {
                    delegate.write(src);
                }
            }
        }
    }

    static final class ReadReturnsEndOfStreamOnClose extends CommunicatorContractTest {
        ReadReturnsEndOfStreamOnClose() {
            super(TransportUnderTest.local().withWrapper(Bug::new));
        }

        private static final class Bug extends Defect {
            Bug(Communicator c) {
                super(c);
            }

            @Override
            Communicator wrap(Communicator c) {
                return new Bug(c);
            }

            @Override
            public int read(ByteBuffer dst) throws IOException {
                try {
                    return delegate.read(dst);
                } catch (AsynchronousCloseException e) {
                    return -1;
                }
            }
        }
    }

    static final class AnonymousConnectErrors extends CommunicatorContractTest {
        AnonymousConnectErrors() {
            super(TransportUnderTest.local().withWrapper(Bug::new));
        }

        private static final class Bug extends Defect {
            Bug(Communicator c) {
                super(c);
            }

            @Override
            Communicator wrap(Communicator c) {
                return new Bug(c);
            }

            @Override
            public void connect() throws IOException {
                try {
                    delegate.connect();
                } catch (ConnectException e) {
                    throw new ConnectException("Connection refused");
                }
            }
        }
    }

    static final class LeaksAThread extends CommunicatorContractTest {
        LeaksAThread() {
            super(TransportUnderTest.local().withWrapper(Bug::new));
        }

        private static final class Bug extends Defect {
            Bug(Communicator c) {
                super(c);
            }

            @Override
            Communicator wrap(Communicator c) {
                return new Bug(c);
            }

            @Override
            public void serve() throws IOException {
                delegate.serve();
                Thread t = new Thread(() -> {
                    try {
                        RELEASE_LEAKED.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "rdmacomm-local-leak");
                t.setDaemon(true);
                t.start();
            }
        }
    }

    static final class WrongRemoteErrorType extends RemoteMemoryContractTest {
        WrongRemoteErrorType() {
            super(TransportUnderTest.local().withWrapper(Bug::new));
        }

        private static final class Bug extends Defect {
            Bug(Communicator c) {
                super(c);
            }

            @Override
            Communicator wrap(Communicator c) {
                return new Bug(c);
            }

            @Override
            public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
                try {
                    delegate.put(src, remote, offset);
                } catch (RemoteAccessException e) {
                    throw new IOException("remote failure");
                }
            }
        }
    }
}
