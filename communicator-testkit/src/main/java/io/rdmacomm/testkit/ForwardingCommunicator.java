package io.rdmacomm.testkit;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Set;

/** A communicator that passes every call to another; fault injectors override the calls they disturb. */
abstract class ForwardingCommunicator implements Communicator {
    final Communicator delegate;

    ForwardingCommunicator(Communicator delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public Endpoint endpoint() {
        return delegate.endpoint();
    }

    @Override
    public String peerName() {
        return delegate.peerName();
    }

    @Override
    public void serve() throws IOException {
        delegate.serve();
    }

    @Override
    public Communicator accept() throws IOException {
        return delegate.accept();
    }

    @Override
    public void connect() throws IOException {
        delegate.connect();
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return delegate.read(dst);
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        delegate.write(src);
    }

    @Override
    public void sync() throws IOException {
        delegate.sync();
    }

    @Override
    public boolean isOpen() {
        return delegate.isOpen();
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return delegate.register(buffer, access);
    }

    @Override
    public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        delegate.put(src, remote, offset);
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        delegate.get(remote, offset, dst);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + delegate + "]";
    }
}
