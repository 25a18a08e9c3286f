package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.lang.model.SourceVersion;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The published artifacts (docs/embedding.md): every module's Automatic-Module-Name, the built jars' manifests, and
 * rdmacomm-bom against the modules it lists.
 */
@Timeout(10)
class ArtifactsTest {
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final String GROUP = "io.rdmacomm";

    /** Every module of the parent pom, its profiles' too (the JDK 22+ ones), by directory, with its pom. */
    private static Map<String, Element> modules() throws Exception {
        Map<String, Element> modules = new TreeMap<>();
        var list = pom(ROOT).getElementsByTagName("module");
        for (int i = 0; i < list.getLength(); i++) {
            String dir = list.item(i).getTextContent().trim();
            modules.put(dir, pom(ROOT.resolve(dir)));
        }
        return modules;
    }

    private static Element pom(Path dir) throws Exception {
        try (InputStream in = Files.newInputStream(dir.resolve("pom.xml"))) {
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in).getDocumentElement();
        }
    }

    /** The text of the first element at this path of direct children, or null. */
    private static String text(Element e, String... path) {
        Element at = e;
        for (String name : path) {
            at = child(at, name);
            if (at == null) {
                return null;
            }
        }
        return at.getTextContent().trim();
    }

    private static Element child(Element e, String name) {
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && c.getTagName().equals(name)) {
                return c;
            }
        }
        return null;
    }

    private static List<Element> children(Element e, String name) {
        List<Element> found = new ArrayList<>();
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && c.getTagName().equals(name)) {
                found.add(c);
            }
        }
        return found;
    }

    private static boolean makesJar(Element pom) {
        return !"pom".equals(text(pom, "packaging"));
    }

    private static String moduleName(Element pom) {
        return text(pom, "properties", "rdmacomm.moduleName");
    }

    /** Published: installed and deployed; system-tests sets maven.deploy.skip. */
    private static boolean published(Element pom) {
        return !"true".equals(text(pom, "properties", "maven.deploy.skip"));
    }

    @Test
    void everyModuleNamesItsAutomaticModuleAfterItsRootPackage() throws Exception {
        List<String> wrong = new ArrayList<>();
        Map<String, String> byName = new LinkedHashMap<>();
        for (var module : modules().entrySet()) {
            if (!makesJar(module.getValue())) {
                continue;
            }
            String name = moduleName(module.getValue());
            if (name == null || !SourceVersion.isName(name)) {
                wrong.add(module.getKey() + ": rdmacomm.moduleName " + name + " is not a module name");
                continue;
            }
            String other = byName.put(name, module.getKey());
            if (other != null) {
                wrong.add(module.getKey() + ": " + name + " is " + other + "'s name too");
            }
            Path main = ROOT.resolve(module.getKey()).resolve("src/main/java");
            Path sources = Files.isDirectory(main) ? main : ROOT.resolve(module.getKey()).resolve("src/test/java");
            for (String pkg : packages(sources)) {
                if (!pkg.equals(name) && !pkg.startsWith(name + ".")) {
                    wrong.add(module.getKey() + ": package " + pkg + " is outside its module name " + name);
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    private static Set<String> packages(Path sources) throws IOException {
        try (Stream<Path> files = Files.walk(sources)) {
            return files.filter(f -> f.toString().endsWith(".java") && !f.endsWith("module-info.java"))
                    .map(f -> sources.relativize(f.getParent()).toString().replace(f.getFileSystem().getSeparator(), "."))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /**
     * Under verify (bin/test) the reactor puts the modules' packaged jars on this module's test class path: each
     * manifest names the module's automatic module (the test jar: name.tests). Run where the class path holds
     * target/classes instead (./mvnw test), there is no jar to read.
     */
    @Test
    void everyJarOfTheProjectOnTheClassPathCarriesItsModulesAutomaticModuleName() throws Exception {
        Map<String, Element> modules = modules();
        Map<String, String> wrong = new TreeMap<>();
        Enumeration<URL> manifests = getClass().getClassLoader().getResources("META-INF/MANIFEST.MF");
        while (manifests.hasMoreElements()) {
            URL url = manifests.nextElement();
            Path jar = jarOf(url);
            // a module's own jars, <module>/target/*.jar (not surefire's booter jar below target/surefire)
            if (jar == null || !jar.startsWith(ROOT) || ROOT.relativize(jar).getNameCount() != 3
                    || !ROOT.relativize(jar).getName(1).toString().equals("target")
                    || !jar.getFileName().toString().endsWith(".jar")) {
                continue;
            }
            Element pom = modules.get(ROOT.relativize(jar).getName(0).toString());
            if (pom == null) {
                continue;
            }
            String expected = moduleName(pom) + (jar.getFileName().toString().endsWith("-tests.jar") ? ".tests" : "");
            String actual;
            try (InputStream in = url.openStream()) {
                actual = new Manifest(in).getMainAttributes().getValue("Automatic-Module-Name");
            }
            if (!expected.equals(actual)) {
                wrong.put(ROOT.relativize(jar).toString(), "Automatic-Module-Name " + actual + ", not " + expected);
            }
        }
        assertEquals(Map.of(), wrong);
    }

    private static Path jarOf(URL manifest) throws URISyntaxException {
        String s = manifest.toString();
        if (!s.startsWith("jar:file:") || !s.contains("!/")) {
            return null;
        }
        return Path.of(new java.net.URI(s.substring("jar:".length(), s.indexOf("!/")))).normalize();
    }

    @Test
    void theBomListsEveryPublishedArtifactAtTheProjectsVersionAndNothingElse() throws Exception {
        Element parent = pom(ROOT);
        Element bom = pom(ROOT.resolve("rdmacomm-bom"));
        assertNull(child(bom, "parent"), "rdmacomm-bom has no parent: it would import the parent's"
                + " dependencyManagement (third-party versions) into every application");
        assertEquals(GROUP, text(bom, "groupId"));
        assertEquals(text(parent, "version"), text(bom, "version"), "rdmacomm-bom's version is the parent's");

        Set<String> published = new TreeSet<>();
        for (var module : modules().entrySet()) {
            if (makesJar(module.getValue()) && published(module.getValue())) {
                published.add(text(module.getValue(), "artifactId"));
            }
        }
        assertTrue(published.contains("communicator-api") && published.contains("transport-tcp"), published::toString);

        List<String> listed = new ArrayList<>();
        for (Element d : children(child(child(bom, "dependencyManagement"), "dependencies"), "dependency")) {
            assertEquals(GROUP, text(d, "groupId"), "rdmacomm-bom lists the project's artifacts, nothing else");
            assertEquals("${project.version}", text(d, "version"), text(d, "artifactId"));
            assertNull(text(d, "scope"), text(d, "artifactId"));
            assertNull(text(d, "type"), text(d, "artifactId"));
            listed.add(text(d, "artifactId"));
        }
        assertEquals(listed.size(), new TreeSet<>(listed).size(), "rdmacomm-bom lists an artifact twice: " + listed);
        assertEquals(published, new TreeSet<>(listed), "rdmacomm-bom lists the published modules (not system-tests)");

        Set<String> managedByParent = new TreeSet<>();
        for (Element d : children(child(child(parent, "dependencyManagement"), "dependencies"), "dependency")) {
            if (GROUP.equals(text(d, "groupId"))) {
                managedByParent.add(text(d, "artifactId"));
            }
        }
        assertEquals(published, managedByParent, "the parent's dependencyManagement and rdmacomm-bom list the same");
    }
}
