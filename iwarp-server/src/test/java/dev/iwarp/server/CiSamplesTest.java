package dev.iwarp.server;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CiSamples}, the comparison {@code .ci/run} makes between a README block only a CI step can produce and what
 * the step printed, held against transcripts saved from such steps ({@code src/test/resources/ci-samples}): the stock
 * ib_write_bw client's output from a siw VM run, the probe against siw as the README had it (CI's log) before and
 * after the tools stopped writing {@code /127.0.0.1}, and the soak's lines after a CSV record of bench.
 */
class CiSamplesTest {
    private static final Path SAVED = Path.of("src", "test", "resources", "ci-samples");

    private static List<CiSamples.Sample> marked() throws Exception {
        List<CiSamples.Sample> all = new ArrayList<>();
        for (Path doc : DocFiles.all()) {
            all.addAll(CiSamples.samples(doc.toString(), Files.readAllLines(doc)));
        }
        return all;
    }

    private static List<String> saved(String name) throws Exception {
        return Files.readAllLines(SAVED.resolve(name));
    }

    @Test
    void everyMarkedSampleHasTheShapeOfItsSavedTranscript() throws Exception {
        List<String> where = new ArrayList<>();
        for (CiSamples.Sample s : marked()) {
            String name = Path.of(s.transcript()).getFileName().toString();
            assertTrue(s.transcript().startsWith("target/"), s.where() + ": a transcript a CI step writes: " + s.transcript());
            assertNull(CiSamples.difference(s.block(), saved(name)), s.where() + " against the saved " + name);
            where.add(name);
        }
        // both READMEs' stock client, the probe against siw, the soak
        assertEquals(List.of("ib_write_bw.sample", "ib_write_bw.sample", "probe-send.sample", "soak.sample"),
                where.stream().sorted().toList());
    }

    @Test
    void aBlockThatDriftedFromWhatTheStepPrintsIsFound() throws Exception {
        List<String> block = saved("probe-send.sample");
        // the README's block until the tools stopped writing "/127.0.0.1:17276"
        assertEquals("block line 2 'probe send-too-long against 127.0.0.1:17276: Send longer than any receive the peer "
                + "posted (--size) (64 octets)' does not match printed line 2 'probe send-too-long against /127.0.0.1:"
                + "17276: Send longer than any receive the peer posted (--size) (64 octets)'",
                CiSamples.difference(block, saved("probe-send-2026-11-28.sample")));

        List<String> printed = new ArrayList<>(saved("ib_write_bw.sample"));
        assertNull(CiSamples.difference(printed, printed));
        List<String> inf = new ArrayList<>(printed);
        inf.set(inf.size() - 2, " 4096       20               inf               inf   \t\t   inf"); // a failed clock
        assertTrue(CiSamples.difference(printed, inf).startsWith("block line 24 "), CiSamples.difference(printed, inf));
        List<String> more = new ArrayList<>(printed);
        more.add(3, "Device not recognized to implement inline feature. Disabling it");
        assertTrue(CiSamples.difference(printed, more).startsWith("block line 4 "), CiSamples.difference(printed, more));
        List<String> less = new ArrayList<>(printed.subList(0, printed.size() - 1));
        assertEquals("block line 25 '" + printed.get(24) + "' does not match the end of what was printed",
                CiSamples.difference(printed, less));
        assertEquals("the block ends, but the step printed more from its line 25: " + printed.get(24),
                CiSamples.difference(less, printed));
    }

    @Test
    void figuresAndBlanksAreShapeDotsAreAnyLines() {
        assertEquals("QPN # PSN # GID: #", CiSamples.shape(" QPN 0x0004  PSN 0x10ec23\t GID: 82:84:00:fe:52:86:00:00"));
        assertEquals("siw0 rdma_cm #[B] #.# MB/sec", CiSamples.shape("siw0 rdma_cm 1024[B] 0.91 MB/sec"));
        List<String> block = List.of("$ soak", "...", "run-jar-soak: OK");
        assertNull(CiSamples.difference(block, List.of("$ soak", "run-jar-soak: OK", "")));
        assertNull(CiSamples.difference(block, List.of("$ soak", "a", "b", "run-jar-soak: OK")));
        assertEquals("block line 3 'run-jar-soak: OK' does not match the end of what was printed",
                CiSamples.difference(block, List.of("$ soak", "a", "run-jar-soak: FAILED")));
        assertEquals("target/soak/soak.sample",
                CiSamples.transcriptOf("<!-- compared by CI with target/soak/soak.sample: the soak, figures masked -->"));
        assertEquals("target/x", CiSamples.transcriptOf(" <!-- compared by CI with target/x -->"));
        assertNull(CiSamples.transcriptOf("<!-- not compared: the VM -->"));
    }
}
