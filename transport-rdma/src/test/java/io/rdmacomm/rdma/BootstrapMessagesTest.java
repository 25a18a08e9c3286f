package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.HandshakeException;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bootstrap messages byte for byte, and what truncated, oversized or garbled ones give. */
@Timeout(30)
class BootstrapMessagesTest {
    private static final HexFormat HEX = HexFormat.of();

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    private static ByteBuffer body(String hex) {
        return ByteBuffer.wrap(HEX.parseHex(hex.replace(" ", "")));
    }

    @Test
    void helloByteForByte() throws Exception {
        ByteBuffer f = new BootstrapHello("ucx", 0, new byte[] {(byte) 0xaa, (byte) 0xbb}, 7, 0x200000).encode();
        String expected = "52444d42 0001 01 0014" // magic, version, type HELLO, body length 20
                + "03 756378" // provider "ucx"
                + "00000000" // flags
                + "0002 aabb" // node address
                + "00000007" // channel id
                + "00200000"; // ring size 2m
        assertEquals(expected.replace(" ", ""), HEX.formatHex(bytes(f)));
        f.position(BootstrapFrame.HEADER);
        BootstrapHello h = BootstrapHello.decode(f.slice(), "peer");
        assertEquals("ucx", h.provider());
        assertArrayEquals(new byte[] {(byte) 0xaa, (byte) 0xbb}, h.nodeAddress());
        assertEquals(7, h.channelId());
        assertEquals(0x200000, h.ringSize());
    }

    @Test
    void helloWithAWireFamilyByteForByte() throws Exception {
        ByteBuffer f = new BootstrapHello("ucx-ffm", "ucx", 1, new byte[] {(byte) 0xcc}, 3, 0x10000).encode();
        String expected = "52444d42 0001 01 001e" // magic, version, type HELLO, body length 30
                + "07 7563782d66666d" // provider "ucx-ffm"
                + "00000001" // flags: authentication
                + "0001 cc" // node address
                + "00000003" // channel id
                + "00010000" // ring size 64k
                + "0001 0003 756378"; // tail entry 1: wire family "ucx"
        assertEquals(expected.replace(" ", ""), HEX.formatHex(bytes(f)));
        f.position(BootstrapFrame.HEADER);
        BootstrapHello h = BootstrapHello.decode(f.slice(), "peer");
        assertEquals("ucx-ffm", h.provider());
        assertEquals("ucx", h.family());
        assertEquals(1, h.flags());
        assertNull(BootstrapHello.decode(body("03756378 00000000 0001aa 00000001 00010000"), "p").family(),
                "a HELLO from before wire families");
    }

    @Test
    void helloOfATrustingClientByteForByte() throws Exception {
        ByteBuffer f = new BootstrapHello("ucx-ffm", "ucx", 0, new byte[] {(byte) 0xcc}, 3, 0x10000, true).encode();
        String expected = "52444d42 0001 01 0023" // magic, version, type HELLO, body length 35
                + "07 7563782d66666d 00000000 0001 cc 00000003 00010000" // provider, flags, address, channel, ring
                + "0001 0003 756378" // tail entry 1: wire family "ucx"
                + "0002 0001 01"; // tail entry 2: oneSided=trusted
        assertEquals(expected.replace(" ", ""), HEX.formatHex(bytes(f)));
        f.position(BootstrapFrame.HEADER);
        assertTrue(BootstrapHello.decode(f.slice(), "peer").oneSidedTrusted());
        String hello = "03756378 00000000 0001aa 00000001 00010000";
        assertEquals(false, BootstrapHello.decode(body(hello), "p").oneSidedTrusted(), "no entry: checked");
        assertRefused(hello + "0002 0000", "oneSided entry of 0 bytes");
        assertRefused(hello + "0002 0001 02", "not the byte 1");
        assertRefused(hello + "0002 0001 01 0002 0001 01", "given twice");
        assertRefused(hello + "0002 0001", "truncated at oneSided entry");
    }

    @Test
    void badWireFamiliesAreNamed() {
        String hello = "03756378 00000000 0001aa 00000001 00010000";
        assertRefused(hello + "0001 0000", "wire family of 0 bytes");
        assertRefused(hello + "0001 0011" + "61".repeat(17), "wire family of 17 bytes");
        assertRefused(hello + "0001 0002 0a0d", "wire family is not printable ASCII");
        assertRefused(hello + "0001 0003 7563", "truncated at wire family");
        assertRefused(hello + "0001 0001 61 0001 0001 62", "wire family given twice");
    }

    @Test
    void welcomeAndRefuseByteForByte() throws Exception {
        ByteBuffer w = new BootstrapWelcome(BootstrapWelcome.FLAG_BOUNDS_ENFORCED, new byte[] {1}, 9, 65536)
                .encode();
        assertEquals("52444d42000102000f" + "00000002" + "000101" + "00000009" + "00010000",
                HEX.formatHex(bytes(w)));
        w.position(BootstrapFrame.HEADER);
        BootstrapWelcome d = BootstrapWelcome.decode(w.slice(), "peer");
        assertEquals(9, d.channelId());
        assertEquals(65536, d.ringSize());
        assertEquals(BootstrapWelcome.FLAG_BOUNDS_ENFORCED, d.flags());
        ByteBuffer r = new BootstrapRefuse("no").encode();
        assertEquals("52444d42000103" + "0004" + "0002" + "6e6f", HEX.formatHex(bytes(r)));
        r.position(BootstrapFrame.HEADER);
        assertEquals("no", BootstrapRefuse.decode(r.slice(), "peer").reason());
    }

    @Test
    void tailEntriesAreSkippedButMustFillTheBody() throws Exception {
        String hello = "03756378 00000000 0001aa 00000001 00010000";
        assertEquals(1, BootstrapHello.decode(body(hello + "0009 0002 beef"), "p").channelId());
        HandshakeException e = assertThrows(HandshakeException.class,
                () -> BootstrapHello.decode(body(hello + "0009 0005 beef"), "p"));
        assertTrue(e.getMessage().contains("truncated at extension value"), e.getMessage());
    }

    @Test
    void everyTruncationOfAHelloIsRefusedByName() {
        byte[] full = HEX.parseHex("03756378000000000001aa0000000100010000");
        for (int n = 0; n < full.length; n++) {
            ByteBuffer b = ByteBuffer.wrap(full, 0, n).slice();
            HandshakeException e = assertThrows(HandshakeException.class, () -> BootstrapHello.decode(b, "p"),
                    "a HELLO cut at " + n);
            assertTrue(e.getMessage().startsWith("bootstrap HELLO from p: "), e.getMessage());
        }
    }

    @Test
    void badFieldsAreNamed() {
        assertRefused("00", "provider name of 0 bytes");
        assertRefused("11" + "61".repeat(17), "provider name of 17 bytes");
        assertRefused("020a0d", "not printable ASCII");
        assertRefused("03756378 00000000 0000", "node address of 0 bytes");
        assertRefused("03756378 00000000 1001", "node address of 4097 bytes");
        assertRefused("03756378 00000000 0001aa 00000001 00000000", "ring size 0");
        assertRefused("03756378 00000000 0001aa 00000001 ffffffff", "ring size 4294967295");
    }

    private static void assertRefused(String hex, String expected) {
        HandshakeException e = assertThrows(HandshakeException.class, () -> BootstrapHello.decode(body(hex), "p"));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void headersAreCheckedBeforeAnythingIsAllocated() {
        assertHeader("00000000 0001 01 0000", "expected magic 0x52444d42 ('RDMB'), got 9 bytes 00 00 00 00");
        assertHeader("ffffffff ffff ff ffff", "expected magic");
        assertHeader("52444d42 0002 01 0000", "version 2, expected 1");
        assertHeader("52444d42 0001 09 0000", "unknown message type 9");
        assertHeader("52444d42 0001 01 2001", "body of 8193 bytes, more than 8192");
    }

    private static void assertHeader(String hex, String expected) {
        HandshakeException e = assertThrows(HandshakeException.class,
                () -> BootstrapFrame.checkHeader(body(hex), "p"));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void framesAreReadInPiecesAndAnEarlyEndIsNamed() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
                SocketChannel out = SocketChannel.open(server.getLocalAddress());
                SocketChannel in = server.accept()) {
            in.configureBlocking(false);
            byte[] frame = bytes(new BootstrapRefuse("why").encode());
            out.socket().setTcpNoDelay(true);
            BootstrapFrame f = new BootstrapFrame();
            CompletableFuture<Void> read = CompletableFuture.runAsync(() -> {
                try {
                    f.readBy(in, System.nanoTime() + 10_000_000_000L, "p", "test");
                } catch (IOException e) {
                    throw new CompletionException(e);
                }
            });
            for (int i = 0; i < frame.length; i++) {
                out.write(ByteBuffer.wrap(frame, i, 1));
            }
            read.get(10, TimeUnit.SECONDS);
            assertEquals(BootstrapFrame.REFUSE, f.type());
            assertEquals("why", BootstrapRefuse.decode(f.body(), "p").reason());
            BootstrapFrame cut = new BootstrapFrame();
            out.write(ByteBuffer.wrap(frame, 0, 5));
            out.close();
            IOException e = assertThrows(EOFException.class,
                    () -> cut.readBy(in, System.nanoTime() + 5_000_000_000L, "p", "test"));
            assertTrue(e.getMessage().contains("after 5 of 9 header bytes"), e.getMessage());
        }
    }
}
