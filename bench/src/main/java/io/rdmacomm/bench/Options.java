package io.rdmacomm.bench;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.Units;
import java.net.InetSocketAddress;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** Options shared by the bench commands, validated in one place. */
final class Options {
    /** The largest message or write size: buffers are direct {@code ByteBuffer}s. */
    static final long MAX_SIZE = 1L << 30;

    private Options() {
    }

    /** {@code --json} and {@code --quiet}. */
    static final class Output {
        @Option(names = "--json", description = "print one JSON object per result on stdout, no progress")
        boolean json;

        @Option(names = {"-q", "--quiet"}, description = "no progress on stderr")
        boolean quiet;

        Progress progress(String what, long total, String unit) {
            return json || quiet ? Progress.silent() : Progress.start(what, total, unit, System.err);
        }

        void print(CommandSpec spec, Object result, String text) {
            spec.commandLine().getOut().println(json ? Json.write(result) : text);
            spec.commandLine().getOut().flush();
        }
    }

    /** {@code --size}, {@code --iterations}, {@code --warmup}. */
    static final class Latency {
        @Option(names = {"-s", "--size"}, paramLabel = "SIZE", defaultValue = "8", converter = SizeConverter.class,
                description = "message size each way, e.g. 8, 64k (default: ${DEFAULT-VALUE})")
        long size;

        @Option(names = {"-n", "--iterations"}, paramLabel = "N", defaultValue = "100000",
                description = "measured round trips (default: ${DEFAULT-VALUE})")
        long iterations;

        @Option(names = {"-w", "--warmup"}, paramLabel = "N", defaultValue = "20000",
                description = "round trips before measuring, for the JIT (default: ${DEFAULT-VALUE})")
        long warmup;

        void validate(CommandSpec spec) {
            checkSize(spec, "--size", size);
            if (iterations < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--iterations must be at least 1, got " + iterations);
            }
            if (warmup < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--warmup must not be negative, got " + warmup);
            }
        }
    }

    /** {@code --size}, {@code --total}. */
    static final class Bandwidth {
        @Option(names = {"-s", "--size"}, paramLabel = "SIZE", defaultValue = "1m", converter = SizeConverter.class,
                description = "bytes per write, e.g. 64k, 1m (default: ${DEFAULT-VALUE})")
        long size;

        @Option(names = {"-t", "--total"}, paramLabel = "BYTES", defaultValue = "1g",
                converter = SizeConverter.class,
                description = "bytes to stream, e.g. 512m, 4g (default: ${DEFAULT-VALUE})")
        long total;

        void validate(CommandSpec spec) {
            checkSize(spec, "--size", size);
            if (total < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--total must be at least 1 byte, got " + total);
            }
        }
    }

    static void checkSize(CommandSpec spec, String name, long size) {
        if (size < 1 || size > MAX_SIZE) {
            throw new CommandLine.ParameterException(spec.commandLine(), name + " must be between 1 and "
                    + Units.formatSize(MAX_SIZE) + " bytes, got " + size);
        }
    }

    /** The socket address of a {@code tcp://} endpoint, for the raw baselines. */
    static InetSocketAddress rawAddress(CommandSpec spec, Endpoint endpoint) {
        if (!endpoint.scheme().equals("tcp")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "the raw baselines use plain TCP sockets:"
                    + " give a tcp:// endpoint, got " + endpoint);
        }
        return endpoint.socketAddress();
    }

    /**
     * The socket address of an {@code rdma://host:port} endpoint, for the raw JUCX baseline, which always
     * busy-polls and takes no endpoint options but {@code connectTimeout}.
     */
    static InetSocketAddress rawUcxAddress(CommandSpec spec, Endpoint endpoint) {
        if (!endpoint.scheme().equals("rdma")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "the raw JUCX baseline listens and connects"
                    + " through UCX: give an rdma:// endpoint, got " + endpoint);
        }
        for (EndpointOption option : EndpointOption.values()) {
            if (option != EndpointOption.CONNECT_TIMEOUT && endpoint.isSet(option)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "the raw JUCX baseline always busy-polls"
                        + " and takes no endpoint option but connectTimeout, got " + option.key() + " in " + endpoint);
            }
        }
        return endpoint.socketAddress();
    }

    /** "busy-poll" when the endpoint spins before parking its reads, else "blocking". */
    static String mode(Endpoint endpoint) {
        return endpoint.isSet(EndpointOption.BUSY_POLL) && !endpoint.duration(EndpointOption.BUSY_POLL).isZero()
                ? "busy-poll" : "blocking";
    }

    static final class SizeConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return Units.parseSize(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
