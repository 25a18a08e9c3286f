package io.rdmacomm.gvirtus;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routines that need no GPU, for tests, demonstrations and health checks of a backend. They are not listed for
 * {@link java.util.ServiceLoader}: a backend serves them only when registered, e.g.
 * {@code GVirtuSBackend.builder().registerAll(BuiltinRoutines.all())}.
 *
 * <table>
 *   <caption>Routines</caption>
 *   <tr><th>name</th><th>input</th><th>exit code and output</th></tr>
 *   <tr><td>{@value #ECHO}</td><td>one pointer argument</td>
 *       <td>0 and the same pointer argument (a null pointer comes back as one)</td></tr>
 *   <tr><td>{@value #SLEEP}</td><td>milliseconds, u32</td>
 *       <td>0 after sleeping that long, no output; more than {@value #MAX_SLEEP_MILLIS} ms is
 *       {@value #EXIT_INVALID_VALUE}</td></tr>
 *   <tr><td>{@value #FAIL}</td><td>ignored</td><td>{@value #FAIL_EXIT_CODE}, no output</td></tr>
 *   <tr><td>{@value #CUDA_GET_DEVICE_COUNT}</td><td>ignored (the cudart frontend sends the caller's
 *       {@code int} as a pointer argument)</td>
 *       <td>0 and the count as GVirtuS's cudart plugin returns it: a pointer argument of one {@code int},
 *       0 here, since this backend offers no GPU</td></tr>
 * </table>
 *
 * <p>Input that is not what a routine expects (missing, too short, trailing bytes) is answered with
 * {@value #EXIT_INVALID_VALUE}, the value of {@code cudaErrorInvalidValue}.
 */
public final class BuiltinRoutines {
    private static final Logger LOG = LoggerFactory.getLogger(BuiltinRoutines.class);
    public static final String ECHO = "echo";
    public static final String SLEEP = "sleep";
    public static final String FAIL = "fail";
    public static final String CUDA_GET_DEVICE_COUNT = "cudaGetDeviceCount";
    /** {@code cudaErrorInvalidValue}: the input is not what the routine takes. */
    public static final int EXIT_INVALID_VALUE = 1;
    /** The exit code of {@value #FAIL}. */
    public static final int FAIL_EXIT_CODE = 42;
    /** The longest {@value #SLEEP}: a minute, so a stray request cannot hold a session for hours. */
    public static final long MAX_SLEEP_MILLIS = 60_000;

    private BuiltinRoutines() {
    }

    /** Every routine of this class. */
    public static List<GVirtuSRoutine> all() {
        return List.of(echo(), sleep(), fail(), cudaGetDeviceCount());
    }

    public static GVirtuSRoutine echo() {
        return new Named(ECHO, (in, ctx) -> {
            byte[] data = in.getPointer();
            if (in.hasRemaining()) {
                return GVirtuSResult.error(EXIT_INVALID_VALUE);
            }
            return GVirtuSResult.ok(GVirtuSBuffer.create().addPointer(data));
        });
    }

    public static GVirtuSRoutine sleep() {
        return new Named(SLEEP, (in, ctx) -> {
            long millis = Integer.toUnsignedLong(in.getInt());
            if (in.hasRemaining() || millis > MAX_SLEEP_MILLIS) {
                return GVirtuSResult.error(EXIT_INVALID_VALUE);
            }
            // interruptible: GVirtuSBackend.close() interrupts it
            TimeUnit.MILLISECONDS.sleep(millis);
            return GVirtuSResult.ok(new byte[0]);
        });
    }

    public static GVirtuSRoutine fail() {
        return new Named(FAIL, (in, ctx) -> GVirtuSResult.error(FAIL_EXIT_CODE));
    }

    public static GVirtuSRoutine cudaGetDeviceCount() {
        return new Named(CUDA_GET_DEVICE_COUNT, (in, ctx) -> GVirtuSResult.ok(GVirtuSBuffer.create()
                .addArray(new int[] {0})));
    }

    /** The body of a routine, throwing what a routine may throw. */
    private interface Body {
        GVirtuSResult call(GVirtuSBuffer input, GVirtuSRoutine.Context context) throws Exception;
    }

    private record Named(String name, Body body) implements GVirtuSRoutine {
        @Override
        public GVirtuSResult call(GVirtuSBuffer input, Context context) throws Exception {
            try {
                return body.call(input, context);
            } catch (GVirtuSFormatException e) {
                // the caller's mistake, answered with an exit code as a CUDA routine would; not a backend error
                LOG.debug("{} from {}: {}", name, context.peerName(), e.getMessage());
                return GVirtuSResult.error(EXIT_INVALID_VALUE);
            }
        }

        @Override
        public String toString() {
            return "builtin routine " + name;
        }
    }
}
