package io.rdmacomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The raw JUCX baseline's rules that need no UCX. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RawUcxProtocolTest {
    @Test
    void tagsSeparateSessionsAndTypes() {
        long tag = RawUcx.tag(5, RawUcx.PING);
        assertEquals(RawUcx.PING, tag & 0xFF, "the type is the low byte");
        assertEquals(5, (tag >>> 8) & RawUcx.MAX_SESSION, "the session the three above it");
        assertTrue(RawUcx.tag(6, RawUcx.PING) != tag, "another session's ping does not match");
        assertTrue(RawUcx.tag(5, RawUcx.PONG) != tag, "nor another type");
        assertEquals(RawUcx.tag(RawUcx.MAX_SESSION, 0) >>> 32, RawUcx.MAGIC, "the largest session stays clear of"
                + " the magic");
    }

    @Test
    void runsAreCheckedBeforeTheyAreAccepted() {
        assertNull(RawUcxServer.refusal(RawUcx.KIND_ECHO, 8, 0));
        assertNull(RawUcxServer.refusal(RawUcx.KIND_SINK, 1 << 20, 1));
        assertEquals("unknown kind 9", RawUcxServer.refusal(9, 8, 0));
        assertTrue(RawUcxServer.refusal(RawUcx.KIND_ECHO, 0, 0).startsWith("message size 0 outside"));
        assertEquals("bad sink total 5 for kind 1", RawUcxServer.refusal(RawUcx.KIND_ECHO, 8, 5));
    }

    @Test
    void putRunsAreCheckedBeforeTheyAreAccepted() {
        assertNull(RawUcxServer.refusal(RawUcx.KIND_PUT, 1 << 20, 1));
        assertNull(RawUcxServer.refusal(RawUcx.KIND_IDLE_PUT, 8, RawUcxServer.MAX_IDLE_MILLIS));
        assertEquals("bad put total 0", RawUcxServer.refusal(RawUcx.KIND_PUT, 8, 0));
        assertEquals("idle time 0 ms outside 1..60000", RawUcxServer.refusal(RawUcx.KIND_IDLE_PUT, 8, 0));
        assertEquals("unknown kind 5", RawUcxServer.refusal(5, 8, 1));
        assertEquals(RawUcx.TargetMemory.MAPPED, RawUcx.TargetMemory.byId(1).orElseThrow());
        assertTrue(RawUcx.TargetMemory.byId(2).isEmpty());
    }

    @Test
    void aMissingLibucxNamesThePackage() {
        String m = RawUcx.unavailable(new UnsatisfiedLinkError(
                "Native code library failed to load: libjucx.so. libucp.so.0: cannot open shared object file"));
        assertTrue(m.contains("libucp.so.0: cannot open shared object file") && m.contains("apt-get install libucx0"),
                m);
        assertTrue(RawUcx.unavailable(new NoClassDefFoundError("org/openucx/jucx/ucp/UcpParams"))
                .contains("not on the class path"));
    }
}
