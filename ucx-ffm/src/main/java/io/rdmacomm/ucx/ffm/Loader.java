package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds libucp once per JVM and decides whether the binding can run. Never throws: every reason not to
 * run becomes a sentence in {@link #cause()}, so that {@link Ucx#unavailabilityCause()} can be asked
 * without a try block and {@link Native} is only initialised once the answer is "yes".
 */
final class Loader {
  /** System property naming the library to load (a soname or an absolute path); for tests and odd installs. */
  static final String LIBRARY_PROPERTY = "rdmacomm.ucx.library";
  static final String DEFAULT_LIBRARY = "libucp.so.0";
  static final int MIN_MINOR = 12;

  private static final Logger LOG = LoggerFactory.getLogger(Loader.class);

  private static final Result RESULT = load(System.getProperty(LIBRARY_PROPERTY, DEFAULT_LIBRARY));

  /** Outcome of one load attempt: either a lookup and the library version, or the reason it failed. */
  record Result(SymbolLookup lookup, UcxVersion version, String cause) {}

  private Loader() {}

  static Optional<String> cause() {
    return Optional.ofNullable(RESULT.cause());
  }

  static SymbolLookup lookup() {
    if (RESULT.cause() != null) {
      throw new IllegalStateException("UCX binding unavailable: " + RESULT.cause());
    }
    return RESULT.lookup();
  }

  static UcxVersion version() {
    lookup();
    return RESULT.version();
  }

  /**
   * One attempt to make {@code library} usable; separate from the memoised {@link #RESULT} so that a
   * test can show the message for a library that is not there.
   */
  static Result load(String library) {
    try {
      String platform = checkPlatform();
      if (platform != null) {
        return new Result(null, null, platform);
      }
      if (!Loader.class.getModule().isNativeAccessEnabled()) {
        return new Result(null, null, "native access is not enabled for " + describe(Loader.class.getModule())
            + ": start java with --enable-native-access=" + moduleOption(Loader.class.getModule()));
      }
      disableUcxErrorSignals();
      SymbolLookup lookup;
      try {
        lookup = SymbolLookup.libraryLookup(library, Arena.global());
      } catch (IllegalArgumentException e) {
        return new Result(null, null, library + " not found (" + e.getMessage()
            + "): install libucx0 (apt-get install libucx0)");
      }
      UcxVersion version = readVersion(lookup);
      String unsupported = checkVersion(version);
      if (unsupported != null) {
        return new Result(null, version, unsupported);
      }
      LOG.debug("loaded {} version {}", library, version);
      return new Result(lookup, version, null);
    } catch (Throwable t) {
      // The probe must answer, not throw: any surprise (missing symbol, linker refusal) becomes the cause.
      return new Result(null, null, "loading " + library + " failed: " + t);
    }
  }

  /** {@code null} when the binding supports {@code v}, else the sentence saying why not. */
  static String checkVersion(UcxVersion v) {
    if (v.major() == 1 && v.minor() >= MIN_MINOR) {
      return null;
    }
    return "libucp " + v + " is not supported: this binding supports libucp 1.x from 1." + MIN_MINOR
        + " (its struct layouts were checked against the 1.13 headers; later 1.x releases only append fields)";
  }

  private static String checkPlatform() {
    // Pointers travel as Java longs through every downcall and upcall: only sound on LP64 little-endian.
    if (ValueLayout.ADDRESS.byteSize() != 8 || ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
      return "unsupported platform: the binding needs a 64-bit little-endian JVM";
    }
    String os = System.getProperty("os.name", "");
    if (!os.startsWith("Linux")) {
      return "unsupported operating system " + os + ": UCX runs on Linux";
    }
    return null;
  }

  private static UcxVersion readVersion(SymbolLookup lookup) throws Throwable {
    MethodHandle getVersion = Linker.nativeLinker().downcallHandle(
        symbol(lookup, "ucp_get_version"),
        FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ValueLayout.JAVA_INT, 3);
      getVersion.invokeExact(out, out.asSlice(4), out.asSlice(8));
      return new UcxVersion(out.getAtIndex(ValueLayout.JAVA_INT, 0), out.getAtIndex(ValueLayout.JAVA_INT, 1),
          out.getAtIndex(ValueLayout.JAVA_INT, 2));
    }
  }

  /**
   * UCX by default installs handlers for SIGSEGV, SIGBUS, SIGILL and SIGFPE when libucs loads. The JVM
   * uses SIGSEGV itself (implicit null checks, safepoint polls), so UCX's handler would turn an ordinary
   * NullPointerException into a process abort. libucs reads UCX_ERROR_SIGNALS in its constructor, so it
   * is cleared with libc's setenv before the first dlopen; System.getenv is a snapshot and cannot do this.
   */
  private static void disableUcxErrorSignals() throws Throwable {
    Linker linker = Linker.nativeLinker();
    SymbolLookup libc = linker.defaultLookup();
    MethodHandle getenv = linker.downcallHandle(symbol(libc, "getenv"),
        FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
    MethodHandle setenv = linker.downcallHandle(symbol(libc, "setenv"),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment name = arena.allocateFrom("UCX_ERROR_SIGNALS");
      MemorySegment current = (MemorySegment) getenv.invokeExact(name);
      if (!current.equals(MemorySegment.NULL)) {
        String value = current.reinterpret(Integer.MAX_VALUE).getString(0);
        if (value.isEmpty()) {
          return;
        }
        LOG.warn("UCX_ERROR_SIGNALS={} would let UCX take the JVM's own signals; clearing it", value);
      }
      int rc = (int) setenv.invokeExact(name, arena.allocateFrom(""), 1);
      if (rc != 0) {
        throw new IllegalStateException("setenv(UCX_ERROR_SIGNALS) failed");
      }
    }
  }

  /** {@code SymbolLookup.findOrThrow} is JDK 23+; this module compiles for 22. */
  static MemorySegment symbol(SymbolLookup lookup, String name) {
    return lookup.find(name).orElseThrow(() -> new IllegalStateException("symbol " + name + " not found"));
  }

  private static String describe(Module module) {
    return module.isNamed() ? "module " + module.getName() : "the unnamed module (class path)";
  }

  private static String moduleOption(Module module) {
    return module.isNamed() ? module.getName() : "ALL-UNNAMED";
  }
}
