package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.clientcomm.ClientMain;
import io.rdmacomm.servercomm.ServerMain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** Keeps README.md in step with the code: the option table and the usage texts are checked, not trusted. */
@Timeout(10)
class ReadmeTest {
    private static final Path README = Path.of(System.getProperty("user.dir")).resolveSibling("README.md");

    private static String readme() throws IOException {
        return Files.readString(README);
    }

    @Test
    void optionTableListsEveryEndpointOptionAsTheCodeDefinesIt() throws IOException {
        List<String> expected = Arrays.stream(EndpointOption.values())
                .map(o -> "| `" + o.key() + "` | " + o.type().name().toLowerCase(Locale.ROOT) + " | `"
                        + o.defaultText() + "`" + o.schemeDefaults().entrySet().stream().sorted(Map.Entry.comparingByKey())
                                .map(d -> "; " + d.getKey() + ": `" + d.getValue() + "`").collect(Collectors.joining())
                        + " | "
                        + (o.schemes().isEmpty() ? "all" : o.schemes().stream().sorted().collect(Collectors.joining(", ")))
                        + " | " + o.description() + " |")
                .toList();
        List<String> rows = readme().lines()
                .dropWhile(l -> !l.equals("| option | type | default | schemes | meaning |"))
                .skip(2)
                .takeWhile(l -> l.startsWith("|"))
                .toList();
        assertEquals(expected, rows, "README.md's option table differs from EndpointOption; regenerate the rows");
    }

    @Test
    void usageTextsAreTheToolsOwn() throws IOException {
        String readme = readme();
        CommandLine client = new CommandLine(new ClientMain());
        List<String> usages = List.of(
                new CommandLine(new ServerMain()).getUsageMessage(),
                client.getSubcommands().get("hello").getUsageMessage(),
                client.getSubcommands().get("echo").getUsageMessage(),
                client.getSubcommands().get("send").getUsageMessage(),
                client.getSubcommands().get("write").getUsageMessage(),
                client.getSubcommands().get("read").getUsageMessage(),
                client.getSubcommands().get("call").getUsageMessage(),
                client.getSubcommands().get("alltoall").getUsageMessage(),
                client.getSubcommands().get("broadcast").getUsageMessage(),
                client.getSubcommands().get("bench").getUsageMessage(),
                client.getSubcommands().get("gvirtus").getUsageMessage(),
                // the command list below grows with each subcommand; its owners keep their lines current
                client.getUsageMessage().substring(0, client.getUsageMessage().indexOf("Commands:")));
        for (String usage : usages) {
            assertTrue(readme.contains(usage.stripTrailing()), "README.md lacks the current usage text:\n" + usage);
        }
    }
}
