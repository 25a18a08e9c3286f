package io.rdmacomm.session.routine;

/** A plugin routine found through META-INF/services in the test class path. */
public final class ReverseRoutine implements Routine {
    @Override
    public String name() {
        return "reverse";
    }

    @Override
    public String description() {
        return "returns its input bytes in reverse order";
    }

    @Override
    public byte[] run(byte[] input) {
        byte[] out = new byte[input.length];
        for (int i = 0; i < input.length; i++) {
            out[i] = input[input.length - 1 - i];
        }
        return out;
    }
}
