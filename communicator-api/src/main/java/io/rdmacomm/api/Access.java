package io.rdmacomm.api;

import java.util.EnumSet;
import java.util.Set;

/** Rights a peer has on a registered {@link MemoryRegion}. */
public enum Access {
    /** The peer may {@link Communicator#get get} from the region. */
    REMOTE_READ(1),
    /** The peer may {@link Communicator#put put} into the region. */
    REMOTE_WRITE(2);

    private final int bit;

    Access(int bit) {
        this.bit = bit;
    }

    /** The access set as wire bits. */
    public static int toBits(Set<Access> access) {
        int bits = 0;
        for (Access a : access) {
            bits |= a.bit;
        }
        return bits;
    }

    /** The access set from wire bits; unknown bits are rejected. */
    public static Set<Access> fromBits(int bits) {
        if ((bits & ~3) != 0) {
            throw new IllegalArgumentException("unknown access bits 0x" + Integer.toHexString(bits));
        }
        EnumSet<Access> set = EnumSet.noneOf(Access.class);
        for (Access a : values()) {
            if ((bits & a.bit) != 0) {
                set.add(a);
            }
        }
        return set;
    }

    /** Read and write. */
    public static Set<Access> readWrite() {
        return EnumSet.allOf(Access.class);
    }
}
