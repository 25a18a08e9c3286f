package io.rdmacomm.gvirtus;

/** A routine listed for ServiceLoader in the test resources: answers with its session's id. */
public final class DiscoveredRoutine implements GVirtuSRoutine {
    static final String NAME = "testDiscovered";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GVirtuSResult call(GVirtuSBuffer input, Context context) {
        return GVirtuSResult.ok(GVirtuSBuffer.create().addLong(context.sessionId()));
    }
}
