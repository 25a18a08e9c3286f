package io.rdmacomm.gvirtus;

import static io.rdmacomm.gvirtus.ScriptedPeer.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.Mockito.mock;

import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class BuiltinRoutinesTest {
    private final GVirtuSRoutine.Context context = mock(GVirtuSRoutine.Context.class);

    private GVirtuSResult call(GVirtuSRoutine r, String inputHex) throws Exception {
        return r.call(GVirtuSBuffer.wrap(hex(inputHex)), context);
    }

    @Test
    void allHasTheFourRoutinesByName() {
        assertEquals(List.of("echo", "sleep", "fail", "cudaGetDeviceCount"),
                BuiltinRoutines.all().stream().map(GVirtuSRoutine::name).collect(Collectors.toList()));
    }

    @Test
    void echoReturnsItsPointerArgumentByteForByte() throws Exception {
        String hello = "0500000000000000" + "68656c6c6f";
        GVirtuSResult r = call(BuiltinRoutines.echo(), hello);
        assertEquals(0, r.exitCode());
        assertEquals(hello, HexFormat.of().formatHex(r.output()));
        assertEquals("0000000000000000", HexFormat.of().formatHex(call(BuiltinRoutines.echo(), "0000000000000000")
                .output()));
    }

    @Test
    void echoRefusesInputThatIsNotExactlyOnePointerArgument() throws Exception {
        assertEquals(BuiltinRoutines.EXIT_INVALID_VALUE, call(BuiltinRoutines.echo(), "").exitCode());
        assertEquals(BuiltinRoutines.EXIT_INVALID_VALUE, call(BuiltinRoutines.echo(), "0900000000000000 01")
                .exitCode());
        assertEquals(BuiltinRoutines.EXIT_INVALID_VALUE, call(BuiltinRoutines.echo(), "0100000000000000 01 02")
                .exitCode());
    }

    @Test
    void sleepTakesMillisecondsUpToAMinute() throws Exception {
        GVirtuSResult ok = call(BuiltinRoutines.sleep(), "01000000");
        assertEquals(0, ok.exitCode());
        assertEquals(0, ok.output().length);
        // 60001 ms and 4294967295 ms (u32, not -1) are over the limit; a short or long input is malformed
        assertEquals(BuiltinRoutines.EXIT_INVALID_VALUE, call(BuiltinRoutines.sleep(), "61ea0000").exitCode());
        assertEquals(BuiltinRoutines.EXIT_INVALID_VALUE, call(BuiltinRoutines.sleep(), "ffffffff").exitCode());
        assertEquals(BuiltinRoutines.EXIT_INVALID_VALUE, call(BuiltinRoutines.sleep(), "0100").exitCode());
        assertEquals(BuiltinRoutines.EXIT_INVALID_VALUE, call(BuiltinRoutines.sleep(), "0100000000").exitCode());
    }

    @Test
    void sleepStopsWhenItsThreadIsInterrupted() {
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> call(BuiltinRoutines.sleep(), "60ea0000"));
        Thread.interrupted();
    }

    @Test
    void failIsFortyTwoWithNoOutput() throws Exception {
        GVirtuSResult r = call(BuiltinRoutines.fail(), "0102");
        assertEquals(42, r.exitCode());
        assertArrayEquals(new byte[0], r.output());
    }

    @Test
    void cudaGetDeviceCountIsZeroDevicesInTheCudartPluginsLayout() throws Exception {
        // the cudart frontend sends the caller's int as a pointer argument and reads one back
        GVirtuSResult r = call(BuiltinRoutines.cudaGetDeviceCount(), "0400000000000000" + "07000000");
        assertEquals(0, r.exitCode());
        assertEquals("0400000000000000" + "00000000", HexFormat.of().formatHex(r.output()));
        assertEquals(0, call(BuiltinRoutines.cudaGetDeviceCount(), "").exitCode());
    }
}
