package io.rdmacomm.clientcomm.bench;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.Units;
import io.rdmacomm.cli.Cli;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.stream.Collectors;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** Options shared by the bench and baseline commands, validated in one place. */
public final class Options {
    /** The largest message or write size: buffers are direct {@code ByteBuffer}s. */
    public static final long MAX_SIZE = 1L << 30;

    private Options() {
    }

    /** {@code --json} and {@code --quiet}. */
    public static final class Output {
        @Option(names = "--json", description = "print one JSON object per result on stdout, no progress")
        public boolean json;

        @Option(names = {"-q", "--quiet"}, description = "no progress on stderr")
        public boolean quiet;

        public Progress progress(String what, long total, String unit) {
            return json || quiet ? Progress.silent() : Progress.start(what, total, unit, System.err);
        }

        public void print(CommandSpec spec, Object result, String text) {
            spec.commandLine().getOut().println(json ? Json.write(result) : text);
            spec.commandLine().getOut().flush();
        }
    }

    /** {@code --size}, {@code --iterations}, {@code --warmup}. */
    public static final class Latency {
        @Option(names = {"-s", "--size"}, paramLabel = "SIZE", defaultValue = "8", converter = Cli.SizeConverter.class,
                description = "message size each way, e.g. 8, 64k (default: ${DEFAULT-VALUE})")
        public long size;

        @Option(names = {"-n", "--iterations"}, paramLabel = "N", defaultValue = "100000",
                description = "measured round trips (default: ${DEFAULT-VALUE})")
        public long iterations;

        @Option(names = {"-w", "--warmup"}, paramLabel = "N", defaultValue = "20000",
                description = "round trips before measuring, for the JIT (default: ${DEFAULT-VALUE})")
        public long warmup;

        @Option(names = "--percentile-window", paramLabel = "N", defaultValue = "0",
                description = "percentiles over the last N measured round trips only, as ucx_perftest computes "
                    + "them over its last 2048 (0: over all; the mean is always over all) (default: ${DEFAULT-VALUE})")
        public int percentileWindow;

        @Option(names = "--pause-file", paramLabel = "PATH",
                description = "after the warm-up and again after the measured round trips, create PATH and wait "
                    + "until it is deleted: a script reads the server's allocation then (bench/compare's allocation "
                    + "rows); the pause is outside the measured span")
        public java.nio.file.Path pauseFile;

        public void validate(CommandSpec spec) {
            checkSize(spec, "--size", size);
            check(spec, iterations >= 1, "--iterations must be at least 1, got " + iterations);
            check(spec, percentileWindow >= 0, "--percentile-window must not be negative, got " + percentileWindow);
            check(spec, warmup >= 0, "--warmup must not be negative, got " + warmup);
        }
    }

    /** {@code --size}, {@code --total}. */
    public static final class Bandwidth {
        @Option(names = {"-s", "--size"}, paramLabel = "SIZE", defaultValue = "1m", converter = Cli.SizeConverter.class,
                description = "bytes per write, e.g. 64k, 1m (default: ${DEFAULT-VALUE})")
        public long size;

        @Option(names = {"-t", "--total"}, paramLabel = "BYTES", defaultValue = "1g",
                converter = Cli.SizeConverter.class,
                description = "bytes to stream, e.g. 512m, 4g (default: ${DEFAULT-VALUE})")
        public long total;

        @Option(names = "--warmup", paramLabel = "BYTES", defaultValue = "0", converter = Cli.SizeConverter.class,
                description = "bytes to stream first, untimed, on the same connection: the JIT compiles the path "
                    + "before the timed BYTES (default: ${DEFAULT-VALUE})")
        public long warmup;

        public void validate(CommandSpec spec) {
            checkSize(spec, "--size", size);
            check(spec, total >= 1, "--total must be at least 1 byte, got " + total);
            check(spec, warmup >= 0, "--warmup must not be negative, got " + warmup);
            check(spec, total <= Long.MAX_VALUE - warmup, "--total and --warmup together overflow");
        }
    }

    /**
     * Refuses the command line unless {@code ok}.
     *
     * @throws CommandLine.ParameterException with {@code message}, a usage error
     */
    public static void check(CommandSpec spec, boolean ok, String message) {
        if (!ok) {
            throw new CommandLine.ParameterException(spec.commandLine(), message);
        }
    }

    public static void checkSize(CommandSpec spec, String name, long size) {
        check(spec, size >= 1 && size <= MAX_SIZE, name + " must be between 1 and " + Units.formatSize(MAX_SIZE)
                + " bytes, got " + size);
    }

    /** The socket address of a {@code tcp://} endpoint, for the raw baselines. */
    public static InetSocketAddress rawAddress(CommandSpec spec, Endpoint endpoint) {
        check(spec, endpoint.scheme().equals("tcp"), "the raw baselines use plain TCP sockets: give a tcp://"
                + " endpoint, got " + endpoint);
        return endpoint.socketAddress();
    }

    /**
     * The socket address of an {@code rdma://host:port} endpoint, for the raw JUCX baseline, which always
     * busy-polls and takes no endpoint options but {@code connectTimeout}.
     */
    public static InetSocketAddress rawUcxAddress(CommandSpec spec, Endpoint endpoint) {
        check(spec, endpoint.scheme().equals("rdma"), "the raw JUCX baseline listens and connects through UCX:"
                + " give an rdma:// endpoint, got " + endpoint);
        for (EndpointOption option : EndpointOption.values()) {
            check(spec, option == EndpointOption.CONNECT_TIMEOUT || !endpoint.isSet(option), "the raw JUCX baseline"
                    + " always busy-polls and takes no endpoint option but connectTimeout, got " + option.key() + " in "
                    + endpoint);
        }
        return endpoint.socketAddress();
    }

    /** "busy-poll" when the endpoint spins before parking its reads, else "blocking". */
    public static String mode(Endpoint endpoint) {
        return endpoint.isSet(EndpointOption.BUSY_POLL) && !endpoint.duration(EndpointOption.BUSY_POLL).isZero()
                ? "busy-poll" : "blocking";
    }

    /**
     * The endpoint a command measures: the nearest {@code --endpoint} on the way up its command line ({@code bench}'s
     * or {@code baseline}'s own, else {@code clientcomm}'s, which has a default).
     *
     * @throws CommandLine.ParameterException if none names one
     */
    public static Endpoint endpoint(CommandSpec spec) {
        for (CommandSpec s = spec.parent(); s != null; s = s.parent()) {
            OptionSpec option = s.findOption("--endpoint");
            if (option != null && option.getValue() instanceof Endpoint e) {
                return e;
            }
        }
        throw new CommandLine.ParameterException(spec.commandLine(), "no endpoint: give --endpoint URI");
    }

    /** A choice among a few values, each with the word the command line uses for it. */
    public interface Labelled {
        String label();
    }

    /** Converts a label to its enum constant; anything else is refused naming the choices. */
    public abstract static class LabelConverter<E extends Enum<E> & Labelled> implements CommandLine.ITypeConverter<E> {
        private final Class<E> type;
        private final String what;

        public LabelConverter(Class<E> type, String what) {
            this.type = type;
            this.what = what;
        }

        @Override
        public E convert(String value) {
            E[] choices = type.getEnumConstants();
            for (E e : choices) {
                if (e.label().equals(value)) {
                    return e;
                }
            }
            throw new CommandLine.TypeConversionException("unknown " + what + " '" + value + "': expected "
                    + Arrays.stream(choices).map(Labelled::label).collect(Collectors.joining(" or ")));
        }
    }
}
