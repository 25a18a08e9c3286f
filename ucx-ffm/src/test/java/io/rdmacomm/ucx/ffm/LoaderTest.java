package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LoaderTest {
  @Test
  void missingLibraryExplainsTheFix() {
    Loader.Result r = Loader.load("/nonexistent/libucp.so.0");
    assertNull(r.lookup());
    assertTrue(r.cause().contains("/nonexistent/libucp.so.0 not found"), r.cause());
    assertTrue(r.cause().contains("install libucx0 (apt-get install libucx0)"), r.cause());
  }

  @Test
  void aLibraryWithoutLibucpSymbolsIsRefusedWithoutThrowing() {
    Loader.Result r = Loader.load("libc.so.6");
    assertNull(r.lookup());
    assertTrue(r.cause().contains("ucp_get_version"), r.cause());
  }

  @Test
  void versionPolicy() {
    assertNull(Loader.checkVersion(new UcxVersion(1, 12, 1)));
    assertNull(Loader.checkVersion(new UcxVersion(1, 13, 1)));
    assertNull(Loader.checkVersion(new UcxVersion(1, 22, 0)));
    String old = Loader.checkVersion(new UcxVersion(1, 11, 2));
    assertTrue(old.contains("libucp 1.11.2 is not supported") && old.contains("from 1.12"), old);
    String next = Loader.checkVersion(new UcxVersion(2, 0, 0));
    assertTrue(next.contains("libucp 2.0.0 is not supported"), next);
  }
}
