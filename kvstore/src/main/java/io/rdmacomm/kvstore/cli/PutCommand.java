package io.rdmacomm.kvstore.cli;

import io.rdmacomm.kvstore.KvClient;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code put KEY VALUE} or {@code put KEY --file F}. */
@Command(name = "put", sortOptions = false,
        description = "Stores VALUE (UTF-8), or the bytes of --file, under KEY over the data plane. Prints nothing.")
final class PutCommand implements Callable<Integer> {
    @ParentCommand
    private KvClientMain client;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "KEY", description = "the key (UTF-8)")
    private String key;

    @Parameters(index = "1", arity = "0..1", paramLabel = "VALUE", description = "the value (UTF-8)")
    private String value;

    @Option(names = {"-f", "--file"}, paramLabel = "F", description = "take the value from this file instead")
    private Path file;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        if ((value == null) == (file == null)) {
            throw new ParameterException(spec.commandLine(), "put takes either VALUE or --file F");
        }
        ByteBuffer bytes;
        if (file != null) {
            try (FileChannel f = FileChannel.open(file, StandardOpenOption.READ)) {
                if (f.size() > client.buffer) {
                    throw new ParameterException(spec.commandLine(), "--file " + file + " has " + f.size()
                            + " bytes, more than --buffer (" + client.buffer + " bytes): give a larger --buffer");
                }
                bytes = ByteBuffer.allocate((int) f.size());
                while (bytes.hasRemaining() && f.read(bytes) >= 0) {
                    // reads until full or the file ends early
                }
                bytes.flip();
            }
        } else {
            bytes = ByteBuffer.wrap(value.getBytes(StandardCharsets.UTF_8));
        }
        try (KvClient kv = client.connect("kv-client put")) {
            kv.put(key.getBytes(StandardCharsets.UTF_8), bytes);
        }
        return 0;
    }
}
