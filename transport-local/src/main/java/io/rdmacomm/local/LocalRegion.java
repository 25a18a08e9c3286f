package io.rdmacomm.local;

import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;

/** A registered buffer of a local connection. Copies and deregistration exclude each other. */
final class LocalRegion implements MemoryRegion {
    private final Regions owner;
    private final ByteBuffer view;
    private final RegionDescriptor descriptor;
    private final byte[] key;
    private boolean closed;

    LocalRegion(Regions owner, ByteBuffer view, RegionDescriptor descriptor) {
        this.owner = owner;
        this.view = view;
        this.descriptor = descriptor;
        this.key = descriptor.key();
    }

    @Override
    public ByteBuffer buffer() {
        return view.duplicate();
    }

    @Override
    public RegionDescriptor descriptor() {
        return descriptor;
    }

    boolean keyMatches(byte[] presented) {
        return MessageDigest.isEqual(key, presented);
    }

    synchronized void copyIn(ByteBuffer src, long offset) throws RemoteAccessException {
        checkOpen();
        view.duplicate().position((int) offset).put(src);
    }

    synchronized void copyOut(long offset, ByteBuffer dst) throws RemoteAccessException {
        checkOpen();
        ByteBuffer from = view.duplicate();
        from.position((int) offset).limit((int) offset + dst.remaining());
        dst.put(from);
    }

    private void checkOpen() throws RemoteAccessException {
        if (closed) {
            throw new RemoteAccessException("region " + descriptor + " was deregistered");
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        owner.remove(this);
    }
}
