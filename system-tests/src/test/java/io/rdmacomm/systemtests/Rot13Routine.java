package io.rdmacomm.systemtests;

import io.rdmacomm.session.routine.Routine;

/**
 * A routine plugin on the test class path, which the servercomm JVMs of the end-to-end tests share: it shows
 * that servercomm loads plugins from its class path.
 */
public final class Rot13Routine implements Routine {
    @Override
    public String name() {
        return "rot13";
    }

    @Override
    public String description() {
        return "rotates ASCII letters by 13 places";
    }

    @Override
    public byte[] run(byte[] input) {
        byte[] out = input.clone();
        for (int i = 0; i < out.length; i++) {
            int c = out[i];
            if (c >= 'a' && c <= 'z') {
                out[i] = (byte) ('a' + (c - 'a' + 13) % 26);
            } else if (c >= 'A' && c <= 'Z') {
                out[i] = (byte) ('A' + (c - 'A' + 13) % 26);
            }
        }
        return out;
    }
}
