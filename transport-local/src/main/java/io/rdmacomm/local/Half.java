package io.rdmacomm.local;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.AbstractCommunicator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;

/**
 * One end of a local connection: the pipe it reads, the pipe it writes, and the memory it has registered for
 * its peer. The peer's end is reachable, so one-sided operations run in the caller's thread against the
 * peer's regions without the peer's application taking part.
 */
final class Half implements AbstractCommunicator.Link {
    final Pipe in;
    final Pipe out;
    final Regions regions;
    final String label;
    /** The endpoint of the communicator this end belongs to: its options and the name in messages. */
    private final Endpoint endpoint;
    private final long readTimeout;
    private Half peer;
    private volatile boolean closed;

    private Half(Pipe in, Pipe out, Endpoint endpoint, String label) {
        this.in = in;
        this.out = out;
        this.endpoint = endpoint;
        this.readTimeout = endpoint.duration(EndpointOption.READ_TIMEOUT).toNanos();
        this.regions = new Regions(endpoint.size(EndpointOption.MAX_REGISTERED));
        this.label = label;
    }

    /**
     * A new connection between a client on {@code client} and the server on {@code server}, each pipe holding the
     * writer's {@code sendBuffer} and at least {@code minPipeBytes}; element 0 is the client's end, element 1 the
     * server's.
     */
    static Half[] link(Endpoint client, Endpoint server, int minPipeBytes, String clientLabel, String serverLabel) {
        Pipe up = new Pipe(Math.max(minPipeBytes, client.intSize(EndpointOption.SEND_BUFFER)));
        Pipe down = new Pipe(Math.max(minPipeBytes, server.intSize(EndpointOption.SEND_BUFFER)));
        Half clientEnd = new Half(down, up, client, clientLabel);
        Half serverEnd = new Half(up, down, server, serverLabel);
        clientEnd.peer = serverEnd;
        serverEnd.peer = clientEnd;
        return new Half[] {clientEnd, serverEnd};
    }

    Half peer() {
        return peer;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public String peerName() {
        return peer.label;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return in.read(dst, readTimeout, "read from " + peer.label + " on " + endpoint);
    }

    @Override
    public int available() throws IOException {
        return in.available();
    }

    @Override
    public boolean notifyReadable(Runnable listener) {
        in.notifyReadable(listener);
        return true;
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        out.write(src, readTimeout, "write to " + peer.label + " on " + endpoint);
    }

    /** Written bytes are readable at once; only bytes the peer dropped unread when it closed make sync fail. */
    @Override
    public void sync() throws IOException {
        if (out.undeliverable()) {
            throw new IOException("sync to " + peer.label + " on " + endpoint
                    + ": connection closed by the peer before it read everything");
        }
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return regions.register(buffer, access, peer.label + "'s peer on " + endpoint);
    }

    @Override
    public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        target().regions.resolve(remote, offset, src.remaining(), Access.REMOTE_WRITE, peer.label)
                .copyIn(src, offset);
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        target().regions.resolve(remote, offset, dst.remaining(), Access.REMOTE_READ, peer.label)
                .copyOut(offset, dst);
    }

    private Half target() throws IOException {
        if (peer.isClosed()) {
            throw new IOException("remote memory of " + peer.label + " on " + endpoint
                    + " is gone: the peer closed the connection");
        }
        return peer;
    }

    /** Ends the outgoing stream (the peer reads -1), discards the incoming one and deregisters all memory. */
    @Override
    public void close() {
        closed = true;
        out.closeWriter();
        in.closeReader();
        regions.closeAll();
    }
}
