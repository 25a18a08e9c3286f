package io.rdmacomm.kvstore.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** Keeps kvstore/README.md in step with the code: the usage texts it shows are the binaries' own. */
@Timeout(10)
class KvReadmeTest {
    private static final Path README = Path.of(System.getProperty("user.dir"), "README.md");

    @Test
    void usageTextsAreTheBinariesOwn() throws IOException {
        String readme = Files.readString(README);
        CommandLine client = new CommandLine(new KvClientMain(new PrintStream(new ByteArrayOutputStream())));
        List<String> usages = new ArrayList<>();
        usages.add(new CommandLine(new KvServerMain()).getUsageMessage());
        usages.add(client.getUsageMessage());
        for (CommandLine sub : client.getSubcommands().values()) {
            usages.add(sub.getUsageMessage());
        }
        for (String usage : usages) {
            assertTrue(readme.contains(usage.stripTrailing()), "kvstore/README.md lacks the current usage text:\n"
                    + usage);
        }
    }
}
