package dev.iwarp.server;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every sample of a command and its output in {@link DocFiles} (a fenced block without a language whose first line is
 * a prompt, {@code $ } or {@code guest$ }) is either compared by a doc test ({@code <!-- doc-test ... -->} right above
 * it), compared by CI with what a step of {@code .ci/run} printed ({@code <!-- compared by CI with PATH: ... -->}, see
 * {@link CiSamples}) or says why it cannot be ({@code <!-- not compared: REASON -->}, for output of another machine such as the siw
 * VM, with the command that produced it in the block): a new sample cannot drift unnoticed.
 */
class DocSamplesMarkedTest {
    static final String NOT_COMPARED = "<!-- not compared: ";

    /** "file:line" of each unmarked sample; a not-compared marker without a reason counts as unmarked. */
    static List<String> unmarked(Path doc, List<String> lines) {
        List<String> bad = new ArrayList<>();
        boolean inBlock = false;
        String previousMarker = ""; // the marker above the block before this one
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (!l.startsWith("```")) {
                continue;
            }
            if (inBlock) {
                inBlock = false;
                continue;
            }
            inBlock = true;
            int m = i - 1;
            while (m >= 0 && lines.get(m).isBlank()) {
                m--;
            }
            String marker = m >= 0 ? lines.get(m).trim() : "";
            // the clients' block of "<!-- doc-test: serve log, then the commands below -->" follows serve's block
            boolean below = marker.equals("```") && previousMarker.endsWith("then the commands below -->");
            previousMarker = marker;
            boolean sample = l.equals("```") && i + 1 < lines.size()
                    && (lines.get(i + 1).startsWith("$ ") || lines.get(i + 1).startsWith("guest$ "));
            if (!sample) {
                continue;
            }
            boolean compared = below || marker.startsWith("<!-- doc-test") && marker.endsWith("-->")
                    || CiSamples.transcriptOf(marker) != null;
            boolean explained = marker.startsWith(NOT_COMPARED) && marker.endsWith("-->")
                    && marker.length() > NOT_COMPARED.length() + "-->".length() + 3;
            if (!compared && !explained) {
                bad.add(doc + ":" + (i + 1));
            }
        }
        return bad;
    }

    @Test
    void everySampleIsComparedOrSaysWhyNot() throws Exception {
        List<String> bad = new ArrayList<>();
        int samples = 0;
        for (Path doc : DocFiles.all()) {
            List<String> lines = Files.readAllLines(doc);
            bad.addAll(unmarked(doc, lines));
            samples += (int) lines.stream().filter(l -> l.startsWith("$ ") || l.startsWith("guest$ ")).count();
        }
        assertTrue(samples >= 20, "prompts found: " + samples);
        assertEquals(List.of(), bad, "samples neither compared by a doc test nor marked " + NOT_COMPARED + "REASON -->");
    }

    @Test
    void theRuleFindsAnUnmarkedSample() {
        Path doc = Path.of("x.md");
        assertEquals(List.of("x.md:2"), unmarked(doc, List.of("text", "```", "$ java -jar iwarp-server.jar ping", "```")));
        assertEquals(List.of(), unmarked(doc, List.of("<!-- doc-test: serve -->", "```", "$ ping", "```")));
        assertEquals(List.of(), unmarked(doc, List.of("<!-- not compared: siw in the VM -->", "", "```", "guest$ x", "```")));
        assertEquals(List.of("x.md:2"), unmarked(doc, List.of("<!-- not compared: -->", "```", "$ x", "```")));
        assertEquals(List.of(), unmarked(doc, List.of("<!-- compared by CI with target/x.sample: the VM's -->", "```",
                "guest$ x", "```")));
        assertEquals(List.of("x.md:2"), unmarked(doc, List.of("<!-- compared by CI with -->", "```", "$ x", "```")));
        assertEquals(List.of(), unmarked(doc, List.of("<!-- doc-test: serve log, then the commands below -->", "```",
                "$ serve", "```", "", "```", "$ ping", "```")));
        assertEquals(List.of("x.md:6"), unmarked(doc, List.of("<!-- doc-test: serve log, then: ping -->", "```",
                "$ serve", "```", "", "```", "$ ping", "```")));
        assertEquals(List.of(), unmarked(doc, List.of("```java", "$ not a prompt in code", "```")));
    }
}
