package io.rdmacomm.kvstore.cli;

import io.rdmacomm.kvstore.KvClient;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code get KEY}: the value's bytes on stdout, nothing else. */
@Command(name = "get",
        description = "Prints the value stored under KEY on stdout, byte for byte and nothing else. A missing key"
                + " exits 1 with one line on stderr.")
final class GetCommand implements Callable<Integer> {
    @ParentCommand
    private KvClientMain client;

    @Parameters(index = "0", paramLabel = "KEY", description = "the key (UTF-8)")
    private String key;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        try (KvClient kv = client.connect("kv-client get")) {
            ByteBuffer value = kv.get(key.getBytes(StandardCharsets.UTF_8));
            OutputStream out = client.rawOut();
            WritableByteChannel channel = Channels.newChannel(out);
            while (value.hasRemaining()) {
                channel.write(value);
            }
            out.flush();
        }
        return 0;
    }
}
