package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The public probe in fresh JVMs: it answers without throwing, and creating a context then fails clearly. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AvailabilityProbeTest {
  @Test
  void missingLibucp() throws Exception {
    String out = probe(true, "-D" + Loader.LIBRARY_PROPERTY + "=/nonexistent/libucp.so.0");
    assertTrue(out.contains("cause: /nonexistent/libucp.so.0 not found"), out);
    assertTrue(out.contains("install libucx0 (apt-get install libucx0)"), out);
    assertTrue(out.contains("context: UCX binding unavailable: /nonexistent/libucp.so.0 not found"), out);
  }

  @Test
  void nativeAccessNotEnabled() throws Exception {
    String out = probe(false);
    assertTrue(out.contains("cause: native access is not enabled for the unnamed module (class path): "
        + "start java with --enable-native-access=ALL-UNNAMED"), out);
    assertTrue(out.contains("context: UCX binding unavailable: native access"), out);
  }

  @Test
  void availableWithBoth() throws Exception {
    String out = probe(true);
    assertTrue(out.contains("cause: none"), out);
    assertTrue(out.contains("context: created"), out);
  }

  private static String probe(boolean nativeAccess, String... properties) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElseThrow());
    if (nativeAccess) {
      command.add("--enable-native-access=ALL-UNNAMED");
    }
    command.addAll(List.of(properties));
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), ProbeProcess.class.getName()));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    return out;
  }
}
