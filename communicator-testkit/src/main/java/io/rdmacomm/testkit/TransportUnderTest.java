package io.rdmacomm.testkit;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.local.LocalCommunicator;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ByteChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * How the contract kits reach one transport: where to serve, how to open a raw connection that skips the
 * handshake, a server that never answers, an endpoint that refuses, whether the transport can run here, and
 * extra endpoint options for every communicator the kit opens. Immutable; every {@code with...} returns a copy.
 *
 * <p>The defaults suit socket-based transports: serve on the URI's host with its port (use port 0), raw
 * connections are plain {@link SocketChannel}s, the silent server is a bound {@link ServerSocketChannel} that
 * never accepts, and the refused endpoint is one the transport served and closed again. For a scheme without
 * ports ({@code local://name}) each server gets a fresh name. Transports that are not socket-based replace the
 * hooks:
 *
 * <pre>{@code
 * class TcpContractTest extends CommunicatorContractTest {
 *     TcpContractTest() { super(TransportUnderTest.of("tcp://127.0.0.1:0")); }
 * }
 * class TcpBusyPollContractTest extends CommunicatorContractTest {
 *     TcpBusyPollContractTest() {
 *         super(TransportUnderTest.of("tcp://127.0.0.1:0").withOption(EndpointOption.BUSY_POLL, "50us"));
 *     }
 * }
 * class JucxContractTest extends CommunicatorContractTest {
 *     JucxContractTest() {
 *         super(TransportUnderTest.of("rdma://127.0.0.1:0?provider=ucx")
 *                 .withRawConnector(served -> MyRdmaTestHooks.rawConnect(served))
 *                 .withSkipReason(MyRdmaTestHooks::whyUnavailable));
 *     }
 * }
 * }</pre>
 *
 * <p>The kits skip their tests (JUnit assumptions) when {@link #skipReason()} is present, except when the
 * environment variable {@code CI} is {@code true}: there a transport that cannot run fails the tests.
 */
public final class TransportUnderTest {
    /** Opens a transport-level connection to a serving endpoint without the handshake. */
    @FunctionalInterface
    public interface RawConnector {
        ByteChannel connect(Endpoint served) throws IOException;
    }

    /** Starts an endpoint that accepts at the transport level but never answers the handshake. */
    @FunctionalInterface
    public interface SilentServerFactory {
        SilentServer start(TransportUnderTest transport) throws IOException;
    }

    /** Finds an endpoint of this transport where a connect is refused. */
    @FunctionalInterface
    public interface RefusedEndpointFactory {
        Endpoint find(TransportUnderTest transport) throws IOException;
    }

    /** A running silent server; closing it stops it. */
    public interface SilentServer extends AutoCloseable {
        /** Where clients connect (without the kit's extra options). */
        Endpoint endpoint();

        @Override
        void close() throws IOException;

        /** A silent server at {@code endpoint} whose resources {@code resource} releases. */
        static SilentServer of(Endpoint endpoint, AutoCloseable resource) {
            return new SilentServer() {
                @Override
                public Endpoint endpoint() {
                    return endpoint;
                }

                @Override
                public void close() throws IOException {
                    try {
                        resource.close();
                    } catch (IOException | RuntimeException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new IOException(e);
                    }
                }
            };
        }
    }

    private static final AtomicLong NAMES = new AtomicLong();

    private final Endpoint base;
    private final Map<EndpointOption, String> options;
    private final Supplier<Endpoint> serverEndpoints;
    private final RawConnector rawConnector;
    private final SilentServerFactory silentServers;
    private final RefusedEndpointFactory refusedEndpoints;
    private final Supplier<Optional<String>> skipReason;
    private final UnaryOperator<Communicator> wrapper;

    private TransportUnderTest(Endpoint base, Map<EndpointOption, String> options, Supplier<Endpoint> serverEndpoints,
            RawConnector rawConnector, SilentServerFactory silentServers, RefusedEndpointFactory refusedEndpoints,
            Supplier<Optional<String>> skipReason, UnaryOperator<Communicator> wrapper) {
        this.base = base;
        this.options = Map.copyOf(options);
        this.serverEndpoints = serverEndpoints;
        this.rawConnector = rawConnector;
        this.silentServers = silentServers;
        this.refusedEndpoints = refusedEndpoints;
        this.skipReason = skipReason;
        this.wrapper = wrapper;
    }

    /**
     * The transport of {@code uri}'s scheme with the default hooks ({@code local://} gets its own). The URI is
     * where servers are opened: give port 0 for socket transports, any name for {@code local://}. Options in the
     * URI apply to every server the kit opens.
     */
    public static TransportUnderTest of(String uri) {
        Endpoint base = Endpoint.parse(uri);
        TransportUnderTest t = new TransportUnderTest(base, Map.of(), null, TransportUnderTest::socketRaw,
                TransportUnderTest::socketSilentServer, TransportUnderTest::servedAndClosed, Optional::empty,
                UnaryOperator.identity());
        return base.scheme().equals("local") ? t.withRawConnector(LocalCommunicator::connectRaw)
                .withSilentServer(TransportUnderTest::localSilentServer) : t;
    }

    /** The in-process {@code local://} transport (module {@code transport-local}, a dependency of this kit). */
    public static TransportUnderTest local() {
        return of("local://kit");
    }

    /** A copy that sets {@code option} on every endpoint the kit serves on or connects to. */
    public TransportUnderTest withOption(EndpointOption option, String value) {
        base.with(option, value);
        Map<EndpointOption, String> copy = new LinkedHashMap<>(options);
        copy.put(option, value);
        return new TransportUnderTest(base, copy, serverEndpoints, rawConnector, silentServers, refusedEndpoints,
                skipReason, wrapper);
    }

    /** A copy that serves on the endpoints {@code next} supplies (a fresh one per call) instead of the URI's. */
    public TransportUnderTest withServerEndpoints(Supplier<Endpoint> next) {
        return new TransportUnderTest(base, options, Objects.requireNonNull(next), rawConnector, silentServers,
                refusedEndpoints, skipReason, wrapper);
    }

    /** A copy whose raw connections (no handshake) come from {@code connector}. */
    public TransportUnderTest withRawConnector(RawConnector connector) {
        return new TransportUnderTest(base, options, serverEndpoints, Objects.requireNonNull(connector),
                silentServers, refusedEndpoints, skipReason, wrapper);
    }

    /** A copy whose silent servers come from {@code factory}. */
    public TransportUnderTest withSilentServer(SilentServerFactory factory) {
        return new TransportUnderTest(base, options, serverEndpoints, rawConnector, Objects.requireNonNull(factory),
                refusedEndpoints, skipReason, wrapper);
    }

    /** A copy whose refusing endpoint comes from {@code factory}. */
    public TransportUnderTest withRefusedEndpoint(RefusedEndpointFactory factory) {
        return new TransportUnderTest(base, options, serverEndpoints, rawConnector, silentServers,
                Objects.requireNonNull(factory), skipReason, wrapper);
    }

    /**
     * A copy that is skipped (or fails, on CI) when {@code reason} supplies a reason, in addition to the
     * provider's own {@link CommunicatorProvider#unavailabilityCause}.
     */
    public TransportUnderTest withSkipReason(Supplier<Optional<String>> reason) {
        return new TransportUnderTest(base, options, serverEndpoints, rawConnector, silentServers, refusedEndpoints,
                Objects.requireNonNull(reason), wrapper);
    }

    /**
     * A copy whose communicators are wrapped by {@code wrap} when opened, e.g. {@link Faults#oneByteReads} to run
     * the kit over one-byte reads. A wrapper that should also cover accepted communicators wraps them in its
     * {@code accept()}.
     */
    public TransportUnderTest withWrapper(UnaryOperator<Communicator> wrap) {
        return new TransportUnderTest(base, options, serverEndpoints, rawConnector, silentServers, refusedEndpoints,
                skipReason, Objects.requireNonNull(wrap));
    }

    /** The URI scheme under test. */
    public String scheme() {
        return base.scheme();
    }

    /** The prefix of every thread this transport starts ({@code "rdmacomm-tcp-"}). */
    public String threadPrefix() {
        return "rdmacomm-" + scheme() + "-";
    }

    /** Whether servers are asked for port 0 and should report the port they bound. */
    public boolean picksPorts() {
        return base.port() == 0;
    }

    /** A fresh endpoint to serve on, with the extra options. */
    public Endpoint serverEndpoint() {
        Endpoint e;
        if (serverEndpoints != null) {
            e = serverEndpoints.get();
        } else if (base.port() < 0) {
            String prefix = base.scheme() + "://" + base.authority();
            e = Endpoint.parse(prefix + "-" + NAMES.incrementAndGet() + base.toString().substring(prefix.length()));
        } else {
            e = base;
        }
        return withOptions(e);
    }

    /** {@code endpoint} with the extra options added. */
    public Endpoint withOptions(Endpoint endpoint) {
        Endpoint e = endpoint;
        for (Map.Entry<EndpointOption, String> o : options.entrySet()) {
            e = e.with(o.getKey(), o.getValue());
        }
        return e;
    }

    /** Opens an unconnected communicator. */
    public Communicator open(Endpoint endpoint) throws IOException {
        return wrapper.apply(Communicators.open(endpoint));
    }

    /** A raw connection to a serving endpoint, bypassing the handshake. */
    public ByteChannel connectRaw(Endpoint served) throws IOException {
        return rawConnector.connect(served);
    }

    /** Starts a server that never answers the handshake. */
    public SilentServer startSilentServer() throws IOException {
        return silentServers.start(this);
    }

    /** An endpoint where connecting is refused. */
    public Endpoint refusedEndpoint() throws IOException {
        return refusedEndpoints.find(this);
    }

    /**
     * Why this transport cannot be tested here (no provider on the class path, the provider's own
     * unavailability cause, or the reason given to {@link #withSkipReason}), or empty.
     */
    public Optional<String> skipReason() {
        Optional<String> own = skipReason.get();
        if (own.isPresent()) {
            return own;
        }
        CommunicatorProvider p = Communicators.providers().get(scheme());
        if (p == null) {
            return Optional.of("no CommunicatorProvider for " + scheme() + ":// on the class path; available: "
                    + Communicators.providers().keySet());
        }
        return p.unavailabilityCause(base);
    }

    @Override
    public String toString() {
        return base + (options.isEmpty() ? "" : " with " + options);
    }

    private static ByteChannel socketRaw(Endpoint served) throws IOException {
        return SocketChannel.open(served.socketAddress());
    }

    private static SilentServer socketSilentServer(TransportUnderTest t) throws IOException {
        ServerSocketChannel ch = ServerSocketChannel.open();
        try {
            ch.bind(new InetSocketAddress(t.base.host(), 0), 1);
            int port = ((InetSocketAddress) ch.getLocalAddress()).getPort();
            return SilentServer.of(Endpoint.of(t.scheme(), t.base.host(), port), ch);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static SilentServer localSilentServer(TransportUnderTest t) throws IOException {
        Communicator c = Communicators.serve(t.serverEndpoint().toString());
        return SilentServer.of(Endpoint.parse("local://" + c.endpoint().host()), c);
    }

    private static Endpoint servedAndClosed(TransportUnderTest t) throws IOException {
        Endpoint served;
        try (Communicator c = t.open(t.serverEndpoint())) {
            c.serve();
            served = c.endpoint();
        }
        return served;
    }
}
