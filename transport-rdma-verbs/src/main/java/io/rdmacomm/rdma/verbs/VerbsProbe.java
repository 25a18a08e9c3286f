package io.rdmacomm.rdma.verbs;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Whether the verbs provider can run in this JVM on this machine, and if not, what exactly is missing and how to
 * fix it. Each check sits behind a small function so that every branch can be exercised without the native
 * library; {@link #system()} wires the real ones. Nothing here blocks: the library is loaded by initialising
 * DiSNI's own dispatcher class (so it is loaded by the class loader that will use it), the version check is
 * DiSNI's constructor-time comparison, and devices are listed from sysfs, which is what {@code ibv_devices}
 * reads too.
 */
final class VerbsProbe {
    static final String DISPATCHER_CLASS = "com.ibm.disni.verbs.impl.NativeDispatcher";
    static final Path SYSFS_DEVICES = Path.of("/sys/class/infiniband");
    static final Path RDMA_CM_DEVICE = Path.of("/dev/infiniband/rdma_cm");

    /** Loads libdisni; throws the {@link LinkageError} the JVM reports when it cannot. */
    @FunctionalInterface
    interface LibraryLoader {
        void load() throws LinkageError;
    }

    /** Creates DiSNI's provider, which compares libdisni's JNI version with the jar's; throws on a mismatch. */
    @FunctionalInterface
    interface VersionCheck {
        void check() throws IOException, LinkageError;
    }

    /** The RDMA devices the kernel exposes (names as in {@code /sys/class/infiniband}). */
    @FunctionalInterface
    interface DeviceLister {
        List<String> devices() throws IOException;
    }

    private final LibraryLoader loader;
    private final VersionCheck versionCheck;
    private final DeviceLister devices;
    private final BooleanSupplier rdmaCmPresent;
    private final BooleanSupplier directBufferAccessible;
    private final String libraryPath;
    private volatile Optional<String> cause;

    VerbsProbe(LibraryLoader loader, VersionCheck versionCheck, DeviceLister devices, BooleanSupplier rdmaCmPresent,
            BooleanSupplier directBufferAccessible, String libraryPath) {
        this.loader = loader;
        this.versionCheck = versionCheck;
        this.devices = devices;
        this.rdmaCmPresent = rdmaCmPresent;
        this.directBufferAccessible = directBufferAccessible;
        this.libraryPath = libraryPath;
    }

    private static final class SystemHolder {
        // One per JVM: a failed static initialiser cannot be retried, so the first answer is the only true one.
        static final VerbsProbe INSTANCE = new VerbsProbe(
                () -> initialise(DISPATCHER_CLASS),
                () -> com.ibm.disni.verbs.RdmaProvider.provider(),
                VerbsProbe::sysfsDevices,
                () -> Files.exists(RDMA_CM_DEVICE),
                VerbsProbe::directBufferExported,
                System.getProperty("java.library.path", ""));
    }

    /** The probe of this JVM, with the real checks. */
    static VerbsProbe system() {
        return SystemHolder.INSTANCE;
    }

    /** Why the verbs provider cannot run here, with the fix; empty if it can. Computed once. */
    Optional<String> unavailabilityCause() {
        Optional<String> c = cause;
        if (c == null) {
            synchronized (this) {
                c = cause;
                if (c == null) {
                    c = compute();
                    cause = c;
                }
            }
        }
        return c;
    }

    private Optional<String> compute() {
        List<String> problems = new ArrayList<>(2);
        libraryProblem().ifPresent(problems::add);
        if (!safely(directBufferAccessible)) {
            problems.add(Messages.addExports());
        }
        return problems.isEmpty() ? Optional.empty() : Optional.of(String.join(" Also: ", problems));
    }

    private Optional<String> libraryProblem() {
        try {
            loader.load();
        } catch (NoClassDefFoundError e) {
            // "Could not initialize class": DiSNI's dispatcher already failed to load libdisni in this JVM.
            String m = String.valueOf(e.getMessage());
            return Optional.of(m.contains("Could not initialize") ? Messages.noLibrary(libraryPath, m)
                    : Messages.noJar(m));
        } catch (UnsatisfiedLinkError e) {
            String m = String.valueOf(e.getMessage());
            if (m.startsWith("no disni") || m.contains("no disni in")) {
                return Optional.of(Messages.noLibrary(libraryPath, m));
            }
            String lower = m.toLowerCase(Locale.ROOT);
            if (lower.contains("libibverbs") || lower.contains("librdmacm")) {
                return Optional.of(Messages.missingRdmaCore(m));
            }
            return Optional.of(Messages.unloadableLibrary(m));
        } catch (LinkageError | RuntimeException e) {
            return Optional.of(Messages.unloadableLibrary(e.toString()));
        }
        try {
            versionCheck.check();
        } catch (IOException | LinkageError | RuntimeException e) {
            return Optional.of(Messages.versionMismatch(String.valueOf(e.getMessage())));
        }
        List<String> found;
        try {
            found = devices.devices();
        } catch (IOException | RuntimeException e) {
            return Optional.of(Messages.noDevice(e.toString()));
        }
        if (found.isEmpty()) {
            return Optional.of(Messages.noDevice(SYSFS_DEVICES + " lists no device"));
        }
        if (!safely(rdmaCmPresent)) {
            return Optional.of(Messages.noRdmaCm(found));
        }
        return Optional.empty();
    }

    private static boolean safely(BooleanSupplier check) {
        try {
            return check.getAsBoolean();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    private static void initialise(String className) {
        try {
            Class.forName(className, true, VerbsProbe.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new NoClassDefFoundError(className.replace('.', '/'));
        }
    }

    static List<String> sysfsDevices() throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(SYSFS_DEVICES)) {
            for (Path p : dir) {
                names.add(p.getFileName().toString());
            }
        } catch (NoSuchFileException e) {
            return List.of();
        }
        return names;
    }

    /**
     * Whether DiSNI (in the unnamed module, or wherever its jar was loaded) may use {@code sun.nio.ch.DirectBuffer},
     * which it needs for the address of every buffer it hands to the kernel.
     */
    static boolean directBufferExported() {
        Module disni = com.ibm.disni.util.MemoryUtils.class.getModule();
        return Object.class.getModule().isExported("sun.nio.ch", disni);
    }

    /** The texts, kept together so that tests and the README quote the same words. */
    static final class Messages {
        private Messages() {
        }

        static final String BUILD = "build it from the DiSNI 2.1 sources (https://github.com/zrlio/disni, tag v2.1:"
                + " cd libdisni && ./autoprepare.sh && ./configure --with-jdk=$JAVA_HOME && make install; needs"
                + " libibverbs-dev, librdmacm-dev, autoconf, automake, libtool, g++ and a JDK)";

        static String noLibrary(String libraryPath, String detail) {
            return "the verbs provider needs libdisni (DiSNI's JNI library, libdisni.so), which is not on"
                    + " java.library.path (" + libraryPath + "): " + BUILD + ", then start the JVM with"
                    + " -Djava.library.path=<directory holding libdisni.so> or add that directory to LD_LIBRARY_PATH"
                    + " [" + detail + "]";
        }

        static String missingRdmaCore(String detail) {
            return "libdisni was found but cannot be loaded because rdma-core's user-space libraries are missing ["
                    + detail + "]: install them (Debian/Ubuntu: apt-get install libibverbs1 librdmacm1"
                    + " ibverbs-providers; RHEL: dnf install libibverbs librdmacm)";
        }

        static String unloadableLibrary(String detail) {
            return "libdisni was found but cannot be loaded [" + detail + "]: " + BUILD + " on this machine, for"
                    + " this JVM's architecture, and put it on java.library.path";
        }

        static String versionMismatch(String detail) {
            return "libdisni on java.library.path does not match the DiSNI 2.1 jar (JNI version check failed: "
                    + detail + "): rebuild and reinstall libdisni from the DiSNI 2.1 sources (tag v2.1) and remove"
                    + " older copies from java.library.path and LD_LIBRARY_PATH";
        }

        static String noDevice(String detail) {
            return "libdisni loads, but this machine has no RDMA device (" + detail + "): the verbs provider needs"
                    + " an InfiniBand, RoCE or iWARP adapter with its kernel driver and rdma-core (check with"
                    + " ibv_devices or ibv_devinfo, from ibverbs-utils); without one use rdma://...?provider=ucx or"
                    + " tcp://";
        }

        static String noRdmaCm(List<String> devices) {
            return "RDMA devices " + devices + " are present but " + RDMA_CM_DEVICE + " is missing, so rdma-cm"
                    + " cannot set up connections: load the kernel module (modprobe rdma_ucm) and check that the"
                    + " user may open " + RDMA_CM_DEVICE;
        }

        static String noJar(String detail) {
            return "the DiSNI jar (com.ibm.disni:disni:2.1) is not on the class path [" + detail + "]";
        }

        static String addExports() {
            return "DiSNI 2.1 reads the native address of direct buffers through sun.nio.ch.DirectBuffer, which"
                    + " JDK 17+ does not export: start the JVM with --add-exports java.base/sun.nio.ch=ALL-UNNAMED";
        }
    }
}
