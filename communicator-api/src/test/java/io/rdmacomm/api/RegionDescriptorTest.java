package io.rdmacomm.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class RegionDescriptorTest {
    private final RegionDescriptor d = new RegionDescriptor(0x7f00_1234_5678L, 4096, Access.readWrite(),
            new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});

    @Test
    void wireFormRoundTripsAndIsBigEndian() {
        byte[] bytes = d.toBytes();
        assertEquals(d.encodedLength(), bytes.length);
        assertEquals(0x52, bytes[0]);
        assertEquals(0x44, bytes[1]);
        assertEquals(d, RegionDescriptor.fromBytes(bytes));
        ByteBuffer little = ByteBuffer.allocate(64).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        d.writeTo(little);
        little.flip();
        assertEquals(d, RegionDescriptor.readFrom(little));
        assertEquals(java.nio.ByteOrder.LITTLE_ENDIAN, little.order());
    }

    @Test
    void garbageIsRejectedWithAReason() {
        byte[] bytes = d.toBytes();
        bytes[0] = 0;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.fromBytes(bytes))
                .getMessage().contains("magic"));
        byte[] truncated = java.util.Arrays.copyOf(d.toBytes(), d.encodedLength() - 1);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.fromBytes(truncated))
                .getMessage().contains("key"));
        assertThrows(IllegalArgumentException.class, () -> RegionDescriptor.fromBytes(new byte[3]));
    }

    @Test
    void accessChecksBoundsAndRights() throws Exception {
        d.checkAccess(0, 4096, Access.REMOTE_WRITE);
        d.checkAccess(4096, 0, Access.REMOTE_READ);
        assertThrows(RemoteAccessException.class, () -> d.checkAccess(1, 4096, Access.REMOTE_WRITE));
        assertThrows(RemoteAccessException.class, () -> d.checkAccess(-1, 1, Access.REMOTE_WRITE));
        assertThrows(RemoteAccessException.class, () -> d.checkAccess(Long.MAX_VALUE, 2, Access.REMOTE_READ));
        RegionDescriptor readOnly = new RegionDescriptor(1, 10, EnumSet.of(Access.REMOTE_READ), new byte[0]);
        RemoteAccessException e = assertThrows(RemoteAccessException.class,
                () -> readOnly.checkAccess(0, 1, Access.REMOTE_WRITE));
        assertTrue(e.getMessage().contains("REMOTE_WRITE"));
    }

    @Test
    void accessBits() {
        assertEquals(Set.of(), Access.fromBits(0));
        assertEquals(Access.readWrite(), Access.fromBits(Access.toBits(Access.readWrite())));
        assertThrows(IllegalArgumentException.class, () -> Access.fromBits(8));
    }

    @Test
    void textNamesNeitherTheAddressNorTheKeyButTellsRegionsApart() {
        String text = d.toString();
        assertTrue(!text.contains("12345678") && !text.contains("7f00"), "address in " + text);
        assertTrue(!text.contains("010203") && !text.contains("1, 2, 3"), "key in " + text);
        assertTrue(text.contains("len=4096"), text);
        RegionDescriptor other = new RegionDescriptor(0x7f00_1234_5678L, 4096, Access.readWrite(), new byte[] {9});
        assertTrue(!text.equals(other.toString()), "another key, another fingerprint: " + text);
    }
}
