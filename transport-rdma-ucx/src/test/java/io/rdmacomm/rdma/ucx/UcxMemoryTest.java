package io.rdmacomm.rdma.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The memory logic both UCX providers share, on a binding that only records what it was asked. */
@Timeout(30)
class UcxMemoryTest {
    private static final Set<Access> WRITABLE = EnumSet.of(Access.REMOTE_WRITE);

    /** A binding whose "mappings" are at fake addresses and whose keys are strings. */
    private static final class FakeMemory extends UcxMemory<String, String> {
        final AtomicInteger unmapped = new AtomicInteger();
        final List<String> releasedKeys = new ArrayList<>();
        long next = 0x10000;

        FakeMemory(String name, boolean withheld) {
            super(RegisteredMemory.counter(name), withheld);
        }

        @Override
        protected long addressOf(ByteBuffer buffer) {
            return 0x1000;
        }

        @Override
        protected Mapping map(ByteBuffer buffer, long address) {
            return new Mapping(buffer, address, new byte[] {7}, unmapped::incrementAndGet);
        }

        @Override
        protected Mapping allocateMapped(int length) {
            long at = next;
            next += 0x10000;
            return new Mapping(ByteBuffer.allocateDirect(length), at, new byte[] {8}, unmapped::incrementAndGet);
        }

        @Override
        protected String unpackKey(String ep, byte[] packedKey) {
            if (packedKey[0] == 0) {
                throw new IllegalStateException("bad key");
            }
            return ep + ":" + packedKey[0];
        }

        @Override
        protected void releaseKey(String key) {
            releasedKeys.add(key);
        }

        @Override
        protected boolean isUcxKey(byte[] key) {
            return key[0] != 'R';
        }
    }

    @Test
    void aMappedRegionCarriesItsKeyAndIsUnmappedOnceAndCountedUntilThen() throws Exception {
        FakeMemory m = new FakeMemory("ucx-test-mapped", false);
        LocalRegion r = m.register(ByteBuffer.allocateDirect(64), WRITABLE);
        assertEquals(0x1000, r.address());
        assertArrayEquals(new byte[] {7}, r.descriptor().key());
        assertEquals(new RegisteredMemory.Usage(1, 64), RegisteredMemory.counter("ucx-test-mapped").usage());
        r.close();
        r.close();
        assertEquals(1, m.unmapped.get());
        assertEquals(RegisteredMemory.Usage.NONE, RegisteredMemory.counter("ucx-test-mapped").usage());
        RegisteredBuffer b = m.allocate(128, WRITABLE);
        assertEquals(128, b.buffer().capacity());
        assertEquals(0x10000, b.region().address());
        m.releaseRegions();
        assertEquals(2, m.unmapped.get());
    }

    @Test
    void whereOneSidedAccessIsWithheldNothingIsMappedNorUnpacked() throws Exception {
        FakeMemory m = new FakeMemory("ucx-test-withheld", true);
        LocalRegion r = m.register(ByteBuffer.allocateDirect(64), WRITABLE);
        assertEquals(0, r.descriptor().key().length);
        RegisteredBuffer b = m.allocate(32, WRITABLE);
        assertEquals(0, b.region().descriptor().key().length);
        RemoteRegion remote = m.unpack("ep", new RegionDescriptor(0x5000, 16, WRITABLE, new byte[] {3}));
        assertNull(UcxMemory.keyOf(remote));
        m.releaseRemotes();
        m.releaseRegions();
        assertEquals(0, m.unmapped.get());
        assertTrue(m.releasedKeys.isEmpty());
    }

    @Test
    void writesAreAcceptedOnlyInsideARegionOpenForRemoteWrite() throws Exception {
        FakeMemory m = new FakeMemory("ucx-test-bounds", true);
        LocalRegion w = m.register(ByteBuffer.allocateDirect(64), WRITABLE);
        assertTrue(m.acceptsWrite(0x1000, 64));
        assertTrue(m.acceptsWrite(0x1010, 0));
        assertFalse(m.acceptsWrite(0x1001, 64));
        assertFalse(m.acceptsWrite(0xfff, 2));
        assertFalse(m.acceptsWrite(0x1000, -1));
        w.close();
        assertFalse(m.acceptsWrite(0x1000, 1));
        m.register(ByteBuffer.allocateDirect(64), EnumSet.of(Access.REMOTE_READ));
        assertFalse(m.acceptsWrite(0x1000, 1));
        assertThrows(IllegalArgumentException.class, () -> m.register(ByteBuffer.allocate(8), WRITABLE));
    }

    @Test
    void peerKeysAreUnpackedOnceAndReleasedWithTheirAttachments() throws Exception {
        FakeMemory m = new FakeMemory("ucx-test-remote", false);
        RemoteRegion keyed = m.unpack("ep", new RegionDescriptor(0x5000, 16, WRITABLE, new byte[] {3}));
        assertEquals("ep:3", UcxMemory.keyOf(keyed));
        RemoteRegion advert = m.unpack("ep", new RegionDescriptor(0x6000, 16, WRITABLE, new byte[] {'R'}));
        assertNull(UcxMemory.keyOf(advert));
        AtomicInteger closed = new AtomicInteger();
        AutoCloseable attached = closed::incrementAndGet;
        assertSame(attached, m.attach(advert, d -> attached));
        assertNull(m.attach(advert, d -> attached), "one attachment per region");
        assertThrows(io.rdmacomm.api.CommunicatorException.class,
                () -> m.unpack("ep", new RegionDescriptor(0x7000, 16, WRITABLE, new byte[] {0})));
        m.releaseRemotes();
        assertEquals(List.of("ep:3"), m.releasedKeys);
        assertEquals(1, closed.get());
        assertNull(m.attach(advert, d -> attached), "nothing attaches to a released region");
    }
}
