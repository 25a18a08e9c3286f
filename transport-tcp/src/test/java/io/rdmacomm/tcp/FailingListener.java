package io.rdmacomm.tcp;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A listener's stand-in for the servers' accepts: its first {@code failures} accepts throw what {@code failure} makes,
 * later ones accept from the real listener.
 */
final class FailingListener extends ServerSocketChannel {
    private final ServerSocketChannel real;
    private final AtomicInteger failuresLeft;
    private final Supplier<? extends Exception> failure;
    final AtomicInteger failed = new AtomicInteger();

    FailingListener(ServerSocketChannel real, int failures, Supplier<? extends Exception> failure) {
        super(SelectorProvider.provider());
        this.real = real;
        this.failuresLeft = new AtomicInteger(failures);
        this.failure = failure;
    }

    @Override
    public SocketChannel accept() throws IOException {
        if (failuresLeft.getAndDecrement() > 0) {
            failed.incrementAndGet();
            Exception e = failure.get();
            if (e instanceof IOException io) {
                throw io;
            }
            throw (RuntimeException) e;
        }
        return real.accept();
    }

    @Override
    public ServerSocketChannel bind(SocketAddress local, int backlog) {
        throw new UnsupportedOperationException("only accept() is used");
    }

    @Override
    public <T> ServerSocketChannel setOption(SocketOption<T> name, T value) {
        throw new UnsupportedOperationException("only accept() is used");
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return real.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return real.supportedOptions();
    }

    @Override
    public ServerSocket socket() {
        return real.socket();
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        return real.getLocalAddress();
    }

    @Override
    protected void implCloseSelectableChannel() {
    }

    @Override
    protected void implConfigureBlocking(boolean block) {
    }
}
