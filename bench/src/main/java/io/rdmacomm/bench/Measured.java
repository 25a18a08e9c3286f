package io.rdmacomm.bench;

/**
 * What a bench command measures once it is connected: a {@link RoundTrip} or a {@link BulkSender}, the names the
 * JSON result gives the run, and the connection to close when the run is over.
 *
 * @param transport the endpoint scheme for ours; {@code raw-nio} or {@code raw-jucx} for the baselines
 * @param mode how the client waits ({@code blocking}, {@code busy-poll}) or, for the put baselines, what it does
 * @param endpoint the endpoint measured, with the options it was given (e.g. {@code provider=}, {@code busyPoll=})
 */
record Measured<T>(T subject, String transport, String mode, String endpoint, AutoCloseable connection)
        implements AutoCloseable {
    @Override
    public void close() throws Exception {
        connection.close();
    }
}
