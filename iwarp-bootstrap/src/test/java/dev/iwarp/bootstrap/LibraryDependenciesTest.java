package dev.iwarp.bootstrap;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a user who depends on {@code iwarp-bootstrap} alone gets from this project's poms: the compile and runtime
 * dependencies that are not optional, followed through this project's own modules. TLS (Bouncy Castle), SCTP (JNA)
 * and the native transports stay optional, so an MPA-only user gets Netty's modules and SLF4J (their own
 * dependencies are Netty's). A dependency added to a module on this path fails this test until it is listed here
 * and in the README's table of which module brings what.
 */
class LibraryDependenciesTest {

    private static final Set<String> EXPECTED = Set.of(
            "io.netty:netty-codec-base",
            "io.netty:netty-handler",
            "io.netty:netty-transport",
            "io.netty:netty-transport-classes-epoll",
            "org.slf4j:slf4j-api");

    @Test
    void anMpaOnlyUserGetsNettyAndSlf4jOnly() throws Exception {
        Set<String> external = new TreeSet<>();
        Set<String> modules = new TreeSet<>();
        collect(Path.of("pom.xml"), external, modules);
        assertEquals(new TreeSet<>(EXPECTED), external, "external dependencies a user of iwarp-bootstrap gets");
        assertEquals(Set.of("ddp-codec", "framing-support", "ift-codec", "mpa-codec", "rdmap-codec"), modules,
                "this project's modules a user of iwarp-bootstrap gets");
    }

    private static void collect(Path pom, Set<String> external, Set<String> modules) throws Exception {
        Element project = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile())
                .getDocumentElement();
        for (Node n = project.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (!"dependencies".equals(n.getNodeName())) {
                continue; // the project's own list, not dependencyManagement's or a plugin's
            }
            for (Node d = n.getFirstChild(); d != null; d = d.getNextSibling()) {
                if (!(d instanceof Element dep) || !"dependency".equals(d.getNodeName())) {
                    continue;
                }
                String scope = text(dep, "scope", "compile");
                boolean optional = text(dep, "optional", "false").equals("true");
                if (!(scope.equals("compile") || scope.equals("runtime")) || optional) {
                    continue;
                }
                String group = text(dep, "groupId", "");
                String artifact = text(dep, "artifactId", "");
                if (group.equals("dev.iwarp")) {
                    Path module = pom.toAbsolutePath().getParent().resolveSibling(artifact).resolve("pom.xml");
                    if (modules.add(artifact)) {
                        assertTrue(Files.exists(module), "no module directory for " + artifact + ": " + module);
                        collect(module, external, modules);
                    }
                } else {
                    external.add(group + ":" + artifact);
                }
            }
        }
    }

    private static String text(Element dependency, String child, String absent) {
        for (Node n = dependency.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (child.equals(n.getNodeName())) {
                return n.getTextContent().trim();
            }
        }
        return absent;
    }
}
