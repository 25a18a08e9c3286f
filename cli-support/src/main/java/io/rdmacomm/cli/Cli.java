package io.rdmacomm.cli;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.Units;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import picocli.CommandLine;

/**
 * What {@code servercomm} and {@code clientcomm} share on the command line: converters for endpoints, sizes and
 * durations, and the error reporting both promise (one line {@code name: message} on stderr, a stack trace only
 * when verbose; exit code 2 for a bad command line, 1 for a failure).
 */
public final class Cli {
    /** The endpoint both binaries use when none is given. */
    public static final String DEFAULT_ENDPOINT = "tcp://127.0.0.1:9999";
    public static final int EXIT_FAILURE = 1;
    public static final int EXIT_USAGE = 2;

    private Cli() {
    }

    /**
     * Configures logging for a binary. Must run before the first logger is created: SLF4J's simple logger reads
     * its level once.
     */
    public static void configureLogging(String[] args) {
        boolean verbose = false;
        for (String a : args) {
            verbose |= a.equals("-v") || a.equals("--verbose");
        }
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "info" : "warn");
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        System.setProperty("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
    }

    /** Installs the error reporting on {@code cl}; {@code verbose} is asked after parsing. */
    public static CommandLine withErrorReporting(CommandLine cl, String name, BooleanSupplier verbose) {
        cl.setParameterExceptionHandler((e, args) -> {
            e.getCommandLine().getErr().println(name + ": " + e.getMessage() + " (see " + name + " --help)");
            return EXIT_USAGE;
        });
        cl.setExecutionExceptionHandler((e, c, parsed) -> {
            PrintWriter err = c.getErr();
            err.println(name + ": " + describe(e));
            if (verbose.getAsBoolean()) {
                e.printStackTrace(err);
            }
            err.flush();
            return EXIT_FAILURE;
        });
        return cl;
    }

    /** Waits up to a timeout for a server to stop; true if it has. */
    @FunctionalInterface
    public interface StopWait {
        boolean await(Duration timeout) throws InterruptedException;
    }

    /**
     * Makes SIGINT and SIGTERM stop a server binary cleanly: {@code stop} runs, and once {@code stopped} confirms
     * within {@code timeout} the JVM halts with 0, where it would otherwise exit 128+signal although every hook
     * finished. Does nothing once {@code finished} holds (the server returned by itself; the normal exit decides).
     */
    public static void exitZeroOnSignal(String threadName, Runnable stop, StopWait stopped, Duration timeout,
            BooleanSupplier finished) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (finished.getAsBoolean()) {
                return;
            }
            stop.run();
            try {
                if (stopped.await(timeout)) {
                    System.out.flush();
                    Runtime.getRuntime().halt(0);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, threadName));
    }

    /** An exception's message, or its type when it has none. */
    public static String describe(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }

    /** Parses endpoint URIs; a bad one is a usage error naming the bad part. */
    public static final class EndpointConverter implements CommandLine.ITypeConverter<Endpoint> {
        @Override
        public Endpoint convert(String value) {
            try {
                return Endpoint.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Parses sizes such as {@code 8}, {@code 64k}, {@code 1m}. */
    public static final class SizeConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return Units.parseSize(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Parses durations such as {@code 0}, {@code 500ms}, {@code 10s}. */
    public static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return Units.parseDuration(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
