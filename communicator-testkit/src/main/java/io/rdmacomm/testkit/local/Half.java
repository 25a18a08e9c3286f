package io.rdmacomm.testkit.local;

/**
 * One end of a local connection: the pipe it reads, the pipe it writes, and the memory it has registered for
 * its peer. The peer's end is reachable, so one-sided operations run in the caller's thread against the
 * peer's regions without the peer's application taking part.
 */
final class Half {
    final Pipe in;
    final Pipe out;
    final Regions regions;
    final String label;
    private Half peer;
    private volatile boolean closed;

    private Half(Pipe in, Pipe out, long maxRegistered, String label) {
        this.in = in;
        this.out = out;
        this.regions = new Regions(maxRegistered);
        this.label = label;
    }

    /** A new connection; element 0 is the client's end, element 1 the server's. */
    static Half[] link(int clientToServer, int serverToClient, long clientMaxRegistered, long serverMaxRegistered,
            String clientLabel, String serverLabel) {
        Pipe up = new Pipe(clientToServer);
        Pipe down = new Pipe(serverToClient);
        Half client = new Half(down, up, clientMaxRegistered, clientLabel);
        Half server = new Half(up, down, serverMaxRegistered, serverLabel);
        client.peer = server;
        server.peer = client;
        return new Half[] {client, server};
    }

    Half peer() {
        return peer;
    }

    boolean isClosed() {
        return closed;
    }

    /** Ends the outgoing stream (the peer reads -1), discards the incoming one and deregisters all memory. */
    void close() {
        closed = true;
        out.closeWriter();
        in.closeReader();
        regions.closeAll();
    }
}
