package io.rdmacomm.testkit.fuzz;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A connected {@link Communicator} for fuzz targets: its reads return a script in short chunks (at most
 * {@code maxChunk} bytes, so a parser must loop as on a real transport), then -1; its writes are recorded. Unlike
 * {@link io.rdmacomm.testkit.ScriptedPeer}, a Mockito mock, a call allocates nothing here (a mock records every
 * invocation, with its stack location, a few KiB a call), so what {@link ParserChecks} measures is the parser's.
 * Calls other than {@code read}, {@code write}, {@code sync}, {@code peerName} and {@code endpoint} are refused.
 */
public final class ScriptedStream implements Communicator {
    private static final Endpoint ENDPOINT = Endpoint.parse("tcp://127.0.0.1:9999");

    private final ByteBuffer script;
    private final int maxChunk;
    private final ByteArrayOutputStream written = new ByteArrayOutputStream();

    /** A stream that reads {@code script} (copied) in chunks of at most {@code maxChunk} bytes. */
    public ScriptedStream(byte[] script, int maxChunk) {
        if (maxChunk <= 0) {
            throw new IllegalArgumentException("maxChunk must be positive, got " + maxChunk);
        }
        this.script = ByteBuffer.wrap(script.clone());
        this.maxChunk = maxChunk;
    }

    /** How many scripted bytes were read. */
    public int consumed() {
        return script.position();
    }

    /** How many bytes were written so far. */
    public int writtenCount() {
        return written.size();
    }

    /** A copy of everything written so far. */
    public byte[] written() {
        return written.toByteArray();
    }

    @Override
    public Endpoint endpoint() {
        return ENDPOINT;
    }

    @Override
    public String peerName() {
        return "scripted-peer";
    }

    @Override
    public int read(ByteBuffer dst) {
        if (!script.hasRemaining()) {
            return -1;
        }
        int n = Math.min(Math.min(dst.remaining(), script.remaining()), maxChunk);
        int limit = script.limit();
        script.limit(script.position() + n);
        dst.put(script);
        script.limit(limit);
        return n;
    }

    @Override
    public void write(ByteBuffer src) {
        if (src.hasArray()) {
            written.write(src.array(), src.arrayOffset() + src.position(), src.remaining());
            src.position(src.limit());
        } else {
            while (src.hasRemaining()) {
                written.write(src.get());
            }
        }
    }

    @Override
    public void sync() {
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public void close() {
    }

    @Override
    public void serve() throws IOException {
        throw new UnsupportedOperationException("a scripted stream is already connected");
    }

    @Override
    public Communicator accept() throws IOException {
        throw new UnsupportedOperationException("a scripted stream is already connected");
    }

    @Override
    public void connect() throws IOException {
        throw new UnsupportedOperationException("a scripted stream is already connected");
    }
}
