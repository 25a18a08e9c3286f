package io.rdmacomm.session.routine;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class RoutineRegistryTest {
    private final RoutineRegistry registry = RoutineRegistry.builtins();

    private String run(String name, String input) throws RoutineException {
        return new String(registry.find(name).orElseThrow().run(input.getBytes(UTF_8)), UTF_8);
    }

    @Test
    void builtinsAreListedInNameOrder() {
        assertEquals(List.of("echo", "sha256", "sum", "upper"),
                registry.routines().stream().map(Routine::name).toList());
    }

    @Test
    void builtinsComputeTheirResults() throws Exception {
        assertEquals("hello", run("echo", "hello"));
        assertEquals("HELLO ÄÖ", run("upper", "hello äö"));
        assertEquals("123456789012345678901234567900", run("sum", "123456789012345678901234567890, 4 6"));
        assertEquals("0", run("sum", ""));
        assertEquals("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", run("sha256", "hello"));
    }

    @Test
    void sumRejectsGarbageWithTheOffendingToken() {
        RoutineException e = assertThrows(RoutineException.class, () -> run("sum", "1 2 three"));
        assertTrue(e.getMessage().contains("'three'"), e.getMessage());
    }

    @Test
    void unknownRoutinesAreAbsentAndNamesAreValidated() {
        assertFalse(registry.find("rm").isPresent());
        assertTrue(RoutineRegistry.isValidName("my-routine.v2"));
        assertFalse(RoutineRegistry.isValidName("Upper"));
        assertFalse(RoutineRegistry.isValidName("../x"));
        assertFalse(RoutineRegistry.isValidName(""));
    }

    @Test
    void pluginsAreFoundByServiceLoader() {
        RoutineRegistry withPlugins = RoutineRegistry.load(getClass().getClassLoader());
        assertTrue(withPlugins.find("reverse").isPresent(), "test plugin 'reverse' not loaded");
    }
}
