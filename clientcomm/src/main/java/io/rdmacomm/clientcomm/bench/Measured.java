package io.rdmacomm.clientcomm.bench;

import java.io.IOException;

/**
 * What a bench command measures once it is connected: a {@link RoundTrip} or a {@link BulkSender}, the names the
 * JSON result gives the run, the connection to close when the run is over, and what to do on it before measuring.
 * The harness closes the connection whatever happens from the moment it has this, {@link #start} included.
 *
 * @param transport the endpoint scheme for ours; {@code raw-nio} or {@code raw-jucx} for the baselines
 * @param mode how the client waits ({@code blocking}, {@code busy-poll}) or, for the put baselines, what it does
 * @param endpoint the endpoint measured, with the options it was given (e.g. {@code provider=}, {@code busyPoll=})
 * @param start run by the harness before measuring: ours opens its servercomm session there
 */
public record Measured<T>(T subject, String transport, String mode, String endpoint, AutoCloseable connection,
        Start start) implements AutoCloseable {

    /** The step between connecting and measuring. */
    public interface Start {
        void run() throws IOException;
    }

    /** A connection that is ready to measure as it is. */
    public Measured(T subject, String transport, String mode, String endpoint, AutoCloseable connection) {
        this(subject, transport, mode, endpoint, connection, () -> { });
    }

    @Override
    public void close() throws Exception {
        connection.close();
    }
}
