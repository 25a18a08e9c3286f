package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.clientcomm.ClientMain;
import io.rdmacomm.servercomm.ServerMain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * Keeps README.md and docs/ in step with the code: the option table, the usage texts, the links between the pages
 * and the project's own commands they show are checked, not trusted.
 */
@Timeout(10)
class ReadmeTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Path README = ROOT.resolve("README.md");
    private static final Path TOOLS = ROOT.resolve("docs/tools.md");
    /** A markdown link's target: [text](target), without a scheme. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s:]+)\\)");
    /** A command of this project at the start of a shell line: bin/x, bench/x, .ci/x. */
    private static final Pattern COMMAND = Pattern.compile("^(?:\\$ |[A-Z_]+=\\S+ )*((?:bin|bench|\\.ci)/[\\w-]+)");

    private static String readme() throws IOException {
        return Files.readString(README);
    }

    /** README.md, docs/*.md and every module's README.md. */
    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(README);
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs")); Stream<Path> modules = Files.list(ROOT)) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
            modules.map(m -> m.resolve("README.md")).filter(Files::isRegularFile).sorted().forEach(pages::add);
        }
        return pages;
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
        String tools = Files.readString(TOOLS);
        for (String usage : usages) {
            assertTrue(tools.contains(usage.stripTrailing()), "docs/tools.md lacks the current usage text:\n" + usage);
        }
    }

    @Test
    void everyLinkBetweenThePagesLeadsToAFileAndEveryAnchorToAHeading() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            Matcher m = LINK.matcher(Files.readString(page));
            while (m.find()) {
                String target = m.group(1);
                int hash = target.indexOf('#');
                Path file = hash == 0 ? page : page.getParent().resolve(hash < 0 ? target : target.substring(0, hash))
                        .normalize();
                if (!Files.exists(file)) {
                    broken.add(ROOT.relativize(page) + ": " + target + " (no such file)");
                } else if (hash >= 0 && file.toString().endsWith(".md")
                        && !anchors(Files.readString(file)).contains(target.substring(hash + 1))) {
                    broken.add(ROOT.relativize(page) + ": " + target + " (no such heading)");
                }
            }
        }
        assertEquals(List.of(), broken);
    }

    @Test
    void everyCommandOfTheProjectThatThePagesShowIsAnExecutableFile() throws IOException {
        List<String> missing = new ArrayList<>();
        for (Path page : pages()) {
            boolean inFence = false;
            boolean inShellBlock = false;
            for (String line : Files.readAllLines(page)) {
                if (line.startsWith("```")) {
                    inFence = !inFence;
                    inShellBlock = inFence && (line.equals("```") || line.equals("```sh") || line.equals("```text"));
                    continue;
                }
                Matcher m = COMMAND.matcher(line);
                if (inShellBlock && m.find()) {
                    Path command = ROOT.resolve(m.group(1));
                    if (!Files.isRegularFile(command) || !Files.isExecutable(command)) {
                        missing.add(ROOT.relativize(page) + ": " + m.group(1));
                    }
                }
            }
        }
        assertEquals(List.of(), missing);
    }

    /** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to hyphens. */
    private static List<String> anchors(String page) {
        List<String> anchors = new ArrayList<>();
        boolean inFence = false;
        for (String line : page.lines().toList()) {
            if (line.startsWith("```")) {
                inFence = !inFence;
            } else if (!inFence && line.startsWith("#")) {
                String title = line.replaceFirst("^#+\\s*", "").toLowerCase(Locale.ROOT);
                anchors.add(title.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
            }
        }
        return anchors;
    }
}
