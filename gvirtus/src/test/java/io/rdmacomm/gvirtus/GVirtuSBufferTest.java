package io.rdmacomm.gvirtus;

import static io.rdmacomm.gvirtus.ScriptedPeer.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class GVirtuSBufferTest {
    /**
     * What GVirtuS's own Buffer (upstream commit 18f16dc, built with g++ 12 on x86-64) produced for
     * {@code Add<char>(-2); Add<short>(0x1234); Add<int>(-1); Add<long long>(0x0102030405060708); Add<float>(1.5f);
     * Add<double>(-2.25); Add(int[]{1, -1}, 2); Add((int *) NULL); AddString("hi");
     * AddMarshal((void *) 0x1122334455667788)}.
     */
    private static final String GVIRTUS_BYTES = "fe 3412 ffffffff 0807060504030201 0000c03f 00000000000002c0"
            + " 0800000000000000 01000000ffffffff" // pointer argument: length in bytes, then the ints
            + " 0000000000000000" // null pointer: length 0
            + " 0300000000000000 0300000000000000 686900" // AddString: strlen+1 twice, then the bytes and NUL
            + " 8877665544332211"; // AddMarshal: the raw 8 bytes

    @Test
    void addsTheBytesGVirtuSBufferProduces() {
        GVirtuSBuffer b = GVirtuSBuffer.create()
                .addByte((byte) -2).addShort((short) 0x1234).addInt(-1).addLong(0x0102030405060708L)
                .addFloat(1.5f).addDouble(-2.25)
                .addArray(new int[] {1, -1})
                .addNullPointer()
                .addString("hi")
                .addLong(0x1122334455667788L);
        assertEquals(GVIRTUS_BYTES.replace(" ", ""), HexFormat.of().formatHex(b.toByteArray()));
        assertEquals(b.toByteArray().length, b.size());
    }

    @Test
    void readsTheBytesGVirtuSBufferProduces() {
        GVirtuSBuffer b = GVirtuSBuffer.wrap(hex(GVIRTUS_BYTES));
        assertEquals(-2, b.getByte());
        assertEquals(0x1234, b.getShort());
        assertEquals(-1, b.getInt());
        assertEquals(0x0102030405060708L, b.getLong());
        assertEquals(1.5f, b.getFloat());
        assertEquals(-2.25, b.getDouble());
        assertArrayEquals(new int[] {1, -1}, b.getIntArray());
        assertNull(b.getPointer());
        assertEquals("hi", b.getString());
        assertEquals(0x1122334455667788L, b.getLong());
        assertFalse(b.hasRemaining());
    }

    @Test
    void emptyStringIsSizeOneTwiceThenNul() {
        // AddString("") in GVirtuS: 01.. 01.. 00
        GVirtuSBuffer b = GVirtuSBuffer.create().addString("");
        assertEquals("0100000000000000" + "0100000000000000" + "00", HexFormat.of().formatHex(b.toByteArray()));
        assertEquals("", GVirtuSBuffer.wrap(b.toByteArray()).getString());
    }

    @Test
    void arraysAndPointersRoundTrip() {
        byte[] bytes = {1, 2, 3};
        GVirtuSBuffer b = GVirtuSBuffer.create()
                .addPointer(bytes)
                .addPointer(ByteBuffer.wrap(new byte[] {9, 8, 7, 6}, 1, 2))
                .addPointer((byte[]) null)
                .addArray(new long[] {Long.MIN_VALUE, 5})
                .addArray(new float[] {0.5f, -1f})
                .addArray(new double[] {Math.PI})
                .addString("grüße")
                .addRaw(new byte[] {0x7f});
        GVirtuSBuffer r = GVirtuSBuffer.wrap(b.toByteArray());
        assertArrayEquals(bytes, r.getPointer());
        assertArrayEquals(new byte[] {8, 7}, r.getPointer());
        assertNull(r.getPointer());
        assertArrayEquals(new long[] {Long.MIN_VALUE, 5}, r.getLongArray());
        assertArrayEquals(new float[] {0.5f, -1f}, r.getFloatArray());
        assertArrayEquals(new double[] {Math.PI}, r.getDoubleArray());
        assertEquals("grüße", r.getString());
        assertArrayEquals(new byte[] {0x7f}, r.getRaw(1));
        assertEquals(0, r.remaining());
    }

    @Test
    void emptyArrayReadsAsNullPointerAsInGVirtuS() {
        GVirtuSBuffer b = GVirtuSBuffer.create().addPointer(new byte[0]).addArray(new int[0]);
        assertEquals("0000000000000000" + "0000000000000000", HexFormat.of().formatHex(b.toByteArray()));
        assertNull(b.getPointer());
        assertNull(b.getIntArray());
    }

    @Test
    void growsFarPastItsInitialCapacity() {
        GVirtuSBuffer b = GVirtuSBuffer.create();
        for (int i = 0; i < 100_000; i++) {
            b.addInt(i);
        }
        assertEquals(400_000, b.size());
        for (int i = 0; i < 100_000; i++) {
            assertEquals(i, b.getInt());
        }
    }

    @Test
    void readPastTheEndNamesWhatWhereAndHowManyAndLeavesTheCursor() {
        GVirtuSBuffer b = GVirtuSBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6});
        b.getShort();
        GVirtuSFormatException e = assertThrows(GVirtuSFormatException.class, b::getLong);
        assertEquals("GVirtuS buffer: cannot read long (8 bytes) at offset 2: 4 of 6 bytes remain", e.getMessage());
        assertEquals(2, b.position());
        assertEquals(0x0605_0403, b.getInt());
    }

    @Test
    void pointerLengthLargerThanTheBytesLeftIsRejectedBeforeAllocating() {
        GVirtuSBuffer huge = GVirtuSBuffer.wrap(hex("ffffffffffffffff 0102"));
        GVirtuSFormatException e = assertThrows(GVirtuSFormatException.class, huge::getPointer);
        assertTrue(e.getMessage().contains("claims 18446744073709551615 bytes but 2 remain"), e.getMessage());
        assertEquals(0, huge.position());

        GVirtuSBuffer shortData = GVirtuSBuffer.wrap(hex("0500000000000000 010203"));
        e = assertThrows(GVirtuSFormatException.class, shortData::getPointer);
        assertTrue(e.getMessage().contains("claims 5 bytes but 3 remain"), e.getMessage());
    }

    @Test
    void arrayLengthMustBeAMultipleOfTheElementSize() {
        GVirtuSBuffer b = GVirtuSBuffer.wrap(hex("0600000000000000 010203040506"));
        GVirtuSFormatException e = assertThrows(GVirtuSFormatException.class, b::getIntArray);
        assertTrue(e.getMessage().contains("int array at offset 0 claims 6 bytes, not a multiple of 4"),
                e.getMessage());
    }

    @Test
    void malformedStringsAreRejected() {
        GVirtuSBuffer noNul = GVirtuSBuffer.wrap(hex("0200000000000000 0200000000000000 6869"));
        GVirtuSFormatException e = assertThrows(GVirtuSFormatException.class, noNul::getString);
        assertTrue(e.getMessage().contains("does not end with NUL"), e.getMessage());

        GVirtuSBuffer tooLong = GVirtuSBuffer.wrap(hex("0900000000000000 0900000000000000 686900"));
        e = assertThrows(GVirtuSFormatException.class, tooLong::getString);
        assertTrue(e.getMessage().contains("claims 9 bytes but 3 remain"), e.getMessage());

        GVirtuSBuffer headerCut = GVirtuSBuffer.wrap(hex("0300000000000000 0300"));
        e = assertThrows(GVirtuSFormatException.class, headerCut::getString);
        assertTrue(e.getMessage().contains("string header"), e.getMessage());

        assertThrows(IllegalArgumentException.class, () -> GVirtuSBuffer.create().addString("a\0b"));
    }

    @Test
    void zeroInnerSizeIsANullStringAsGVirtuSAssignStringReadsIt() {
        GVirtuSBuffer b = GVirtuSBuffer.wrap(hex("0000000000000000 0000000000000000 2a000000"));
        assertNull(b.getString());
        assertEquals(42, b.getInt());
    }
}
