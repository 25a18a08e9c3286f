package io.rdmacomm.kvstore.cli;

import io.rdmacomm.kvstore.KvClient;
import io.rdmacomm.kvstore.KvException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code delete KEY}. */
@Command(name = "delete",
        description = "Deletes KEY. Prints nothing; a missing key exits 1 with one line on stderr.")
final class DeleteCommand implements Callable<Integer> {
    @ParentCommand
    private KvClientMain client;

    @Parameters(index = "0", paramLabel = "KEY", description = "the key (UTF-8)")
    private String key;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        try (KvClient kv = client.connect("kv-client delete")) {
            if (!kv.delete(key.getBytes(StandardCharsets.UTF_8))) {
                throw new KvException(KvException.Code.NOT_FOUND, "no such key '" + key + "'");
            }
        }
        return 0;
    }
}
