package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles src/test/c/ucx_layout.c against the installed UCX headers and checks that every struct field
 * and constant the binding uses has the header's offset or value.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StructLayoutTest {
  private static final Map<String, Long> FROM_HEADERS = new HashMap<>();

  @BeforeAll
  static void runCProgram(@TempDir Path dir) throws IOException, InterruptedException {
    Path source = Path.of("src/test/c/ucx_layout.c").toAbsolutePath();
    Path binary = dir.resolve("ucx_layout");
    run(List.of("gcc", "-Wall", "-Werror", "-o", binary.toString(), source.toString()));
    for (String line : run(List.of(binary.toString())).split("\n")) {
      String[] f = line.trim().split(" ");
      FROM_HEADERS.put(String.join(" ", List.of(f).subList(0, f.length - 1)), Long.parseLong(f[f.length - 1]));
    }
  }

  private static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
    assertEquals(0, p.exitValue(), command + " failed:\n" + out);
    return out;
  }

  private static long header(String key) {
    Long v = FROM_HEADERS.get(key);
    assertNotNull(v, "ucx_layout.c does not print '" + key + "'");
    return v;
  }

  @Test
  void statusIsOneSignedByte() {
    assertEquals(1, header("sizeof ucs_status_t"));
    assertEquals(1, header("signed ucs_status_t"));
  }

  @Test
  void enumFieldsAreInts() {
    assertEquals(4, header("sizeof ucs_thread_mode_t"));
    assertEquals(4, header("sizeof ucp_err_handling_mode_t"));
    assertEquals(4, Structs.UCP_WORKER_PARAMS.select(MemoryLayout.PathElement.groupElement("thread_mode")).byteSize());
    assertEquals(4, Structs.UCP_EP_PARAMS.select(MemoryLayout.PathElement.groupElement("err_mode")).byteSize());
  }

  @Test
  void everyStructMatchesTheHeaders() {
    List<String> checked = new ArrayList<>();
    for (StructLayout struct : Structs.ALL) {
      String type = struct.name().orElseThrow();
      // UCX structs only grow at the end, behind a field_mask bit: newer headers may be larger than the layout
      // the binding allocates (1.22's ucp_params_t is 8 bytes longer than 1.13's), never smaller.
      assertTrue(header("sizeof " + type) >= struct.byteSize(),
          "sizeof " + type + " is " + header("sizeof " + type) + " in the headers, smaller than the binding's "
              + struct.byteSize());
      compareMembers(type, struct, "", 0, checked);
    }
    long printed = FROM_HEADERS.keySet().stream().filter(k -> k.startsWith("offsetof ")).count();
    assertEquals(printed, checked.size(), "fields printed by the C program but not in Structs: " + checked);
  }

  private static void compareMembers(String type, GroupLayout group, String prefix, long base, List<String> checked) {
    for (MemoryLayout member : group.memberLayouts()) {
      if (member instanceof PaddingLayout) {
        continue;
      }
      String path = prefix + member.name().orElseThrow(() -> new AssertionError("unnamed member in " + type));
      long offset = base + group.byteOffset(MemoryLayout.PathElement.groupElement(member.name().get()));
      assertEquals(header("offsetof " + type + " " + path), offset, "offsetof(" + type + ", " + path + ")");
      checked.add(type + " " + path);
      if (member instanceof GroupLayout nested) {
        compareMembers(type, nested, path + ".", offset, checked);
      }
    }
  }

  @Test
  void everyConstantMatchesTheHeaders() throws IllegalAccessException {
    int compared = 0;
    for (Field field : UcpConst.class.getDeclaredFields()) {
      String name = field.getName();
      if (!Modifier.isStatic(field.getModifiers()) || !(name.startsWith("UCS_") || name.startsWith("UCP_"))) {
        continue;
      }
      field.setAccessible(true);
      long javaValue = ((Number) field.get(null)).longValue();
      assertEquals(header("const " + name), javaValue, name);
      compared++;
    }
    assertTrue(compared >= 50, "only " + compared + " constants compared");
  }

  @Test
  void requestedApiVersionIsNotNewerThanTheHeaders() {
    assertEquals(header("const UCP_API_MAJOR"), UcpConst.REQUESTED_API_MAJOR);
    assertTrue(UcpConst.REQUESTED_API_MINOR <= header("const UCP_API_MINOR"));
  }
}
