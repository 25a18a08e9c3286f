package io.rdmacomm.clientcomm;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.Units;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.gvirtus.GVirtuSLimits;
import io.rdmacomm.gvirtus.GVirtuSRequest;
import io.rdmacomm.gvirtus.GVirtuSResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code gvirtus}: one GVirtuS routine call on any GVirtuS backend (a real one on {@code tcp://…?wire=raw}, or
 * {@code servercomm --protocol gvirtus} on any transport). No session protocol: the connection carries exactly
 * GVirtuS's request and reply. The routine's exit code is a result, printed like the rest; only a failed exchange
 * fails the command.
 */
@Command(name = "gvirtus", sortOptions = false,
        description = {"Calls routine ROUTINE on a GVirtuS backend (a real GVirtuS backend: --endpoint"
                + " 'tcp://HOST:PORT?wire=raw'; or servercomm --protocol gvirtus on any endpoint) with the given input"
                + " (default: empty) and prints its exit code, elapsed seconds and output (hex).",
            "A non-zero exit code of the routine (-1: unknown routine) is printed and the command exits 0; a"
                + " refused or broken connection or a malformed reply exits 1."})
final class GVirtuSCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "ROUTINE", description = "the routine's name, e.g. echo or"
            + " cudaGetDeviceCount")
    private String routine;

    @ArgGroup(exclusive = true)
    private Input input;

    @Option(names = "--json", description = "print one JSON object {\"routine\", \"exitCode\", \"elapsedSeconds\","
            + " \"outputHex\"} instead of three lines")
    private boolean json;

    @Option(names = "--reply-timeout", paramLabel = "DURATION", defaultValue = "2m",
            converter = Cli.DurationConverter.class,
            description = "how long to wait for the reply, unless the endpoint sets readTimeout; 0 waits for ever"
                    + " (default: ${DEFAULT-VALUE})")
    private Duration replyTimeout;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    static final class Input {
        @Option(names = "--input-hex", paramLabel = "HEX", description = "the input: hex digits, two per byte")
        String hex;

        @Option(names = "--input-file", paramLabel = "FILE", description = "the input: a file's bytes")
        Path file;
    }

    @Override
    public Integer call() throws Exception {
        byte[] in = input();
        if (routine.isEmpty() || routine.indexOf('\0') >= 0) {
            throw new ParameterException(spec.commandLine(), "invalid routine name '" + routine
                    + "': must be non-empty and contain no NUL");
        }
        GVirtuSRequest request = new GVirtuSRequest(routine, in);
        Endpoint endpoint = client.endpoint;
        if (!endpoint.isSet(EndpointOption.READ_TIMEOUT)) {
            endpoint = endpoint.with(EndpointOption.READ_TIMEOUT, Units.formatDuration(replyTimeout));
        }
        GVirtuSResult result;
        try (Communicator backend = connect(endpoint)) {
            request.writeTo(backend);
            result = GVirtuSResult.readFrom(backend, GVirtuSLimits.DEFAULT);
        }
        print(result);
        return 0;
    }

    private byte[] input() throws IOException {
        if (input == null) {
            return new byte[0];
        }
        if (input.file != null) {
            if (!Files.isRegularFile(input.file)) {
                throw new ParameterException(spec.commandLine(), "--input-file " + input.file
                        + ": no such file (or not a regular file)");
            }
            return Files.readAllBytes(input.file);
        }
        try {
            return HexFormat.of().parseHex(input.hex);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--input-hex: " + e.getMessage()
                    + "; expected hex digits, two per byte");
        }
    }

    private static Communicator connect(Endpoint endpoint) throws IOException {
        try {
            return Communicators.connect(endpoint.toString());
        } catch (IOException e) {
            String m = Cli.describe(e);
            throw m.contains(endpoint.authority()) ? e : new IOException("cannot connect to " + endpoint + ": " + m, e);
        }
    }

    private void print(GVirtuSResult r) throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        String outputHex = HexFormat.of().formatHex(r.output());
        if (json) {
            ObjectNode o = JSON.createObjectNode();
            o.put("routine", routine);
            o.put("exitCode", r.exitCode());
            o.put("elapsedSeconds", r.elapsedSeconds());
            o.put("outputHex", outputHex);
            out.println(JSON.writeValueAsString(o));
        } else {
            out.println("exitCode " + r.exitCode());
            out.println("elapsedSeconds " + r.elapsedSeconds());
            out.println("outputHex " + outputHex);
        }
        out.flush();
    }
}
