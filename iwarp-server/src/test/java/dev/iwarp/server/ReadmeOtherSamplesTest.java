package dev.iwarp.server;

import dev.iwarp.sctp.IndicationTransport;
import dev.iwarp.server.wire.SctpWire;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The doc test of the samples no plain command-and-output block can hold, each marked {@code <!-- doc-test (KIND) -->}
 * in iwarp-server's README or the other {@link DocFiles}: {@code demo} (its stdout and the log lines on stderr, a process of its own as a user runs
 * it), {@code bench --hist} (the histogram file), {@code metrics} (a Prometheus scrape) and {@code ib_write_bw
 * server} (the server's perftest table, our own client standing in for the siw VM's) and {@code no sctp} (the
 * refusal where SCTP is missing; skipped where it is present). Figures, ids and addresses
 * are masked on both sides; the text and the structure must be equal.
 */
class ReadmeOtherSamplesTest {
    static final String MARK = "<!-- doc-test (";

    /** The lines of each block under {@code <!-- doc-test (kind) -->} in {@link DocFiles}, fences left out; one at least. */
    static List<List<String>> blocks(String kind) throws Exception {
        List<List<String>> found = new ArrayList<>();
        for (Path doc : DocFiles.all()) {
            List<String> lines = Files.readAllLines(doc);
            for (int at = 0; at < lines.size(); at++) {
                if (!lines.get(at).trim().equals(MARK + kind + ") -->")) {
                    continue;
                }
                assertTrue(lines.get(at + 1).startsWith("```"), doc + ":" + (at + 2));
                int end = at + 2;
                while (!lines.get(end).startsWith("```")) {
                    end++;
                }
                found.add(lines.subList(at + 2, end));
            }
        }
        assertTrue(!found.isEmpty(), "no block marked " + MARK + kind + ") --> in " + DocFiles.all());
        return found;
    }

    /** The one block marked {@code <!-- doc-test (kind) -->}. */
    static List<String> block(String kind) throws Exception {
        List<List<String>> all = blocks(kind);
        assertEquals(1, all.size(), "blocks marked " + MARK + kind + ") -->");
        return all.get(0);
    }

    /** Every figure N, hex 0xH, blanks and tabs one blank, the line's end trimmed; ports as {@link ReadmeSamplesTest}. */
    static String masked(String line) {
        return ReadmeServeLogTest.normalise(line).replaceAll("0x[0-9a-fA-F]+", "0xH")
                .replaceAll("(?<![\\w.])\\d+(\\.\\d+)?(E\\d+)?(?![\\w.])", "N").replaceAll("[ \\t]+", " ").strip();
    }

    private static boolean isLogLine(String line) {
        return line.matches("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} .*");
    }

    @Test
    void demoPrintsTheSampleAndLogsItsLines() throws Exception {
        List<String> sample = block("demo");
        assertEquals("$ java -jar iwarp-server.jar demo", sample.get(0));
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dlogback.configurationFile=" + Path.of("target", "classes", "logback.xml").toAbsolutePath(),
                "-cp", ReadmeServeLogTest.mainClassPath(), Main.class.getName(), "demo"));
        Path out = Files.createTempFile("demo-out", ".txt");
        Path err = Files.createTempFile("demo-err", ".txt");
        try {
            Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "demo did not end");
            assertEquals(0, p.exitValue(), Files.readString(out) + Files.readString(err));
            List<String> body = sample.subList(1, sample.size());
            // stdout: demo's and ping's lines; stderr: serve's log lines, interleaved in the sample as a terminal shows
            assertEquals(body.stream().filter(l -> !isLogLine(l)).map(ReadmeServeLogTest::normalise).toList(),
                    Files.readAllLines(out).stream().map(ReadmeServeLogTest::normalise).toList(), "demo's stdout");
            assertEquals(body.stream().filter(ReadmeOtherSamplesTest::isLogLine).map(ReadmeServeLogTest::normalise)
                    .toList(), Files.readAllLines(err).stream().map(ReadmeServeLogTest::normalise).toList(), "demo's log");
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    private static int run(List<String> args, StringWriter out, StringWriter err) {
        return Main.run(args.toArray(new String[0]), new PrintWriter(out, true), new PrintWriter(err, true));
    }

    @Test
    void benchHistWritesTheSampledFormat() throws Exception {
        List<String> sample = block("bench --hist");
        String prompt = "$ java -jar iwarp-server.jar ";
        assertTrue(sample.get(0).startsWith(prompt), sample.get(0));
        assertEquals("$ head -5 send64.hgrm; tail -3 send64.hgrm", sample.get(1));
        Path hist = Files.createTempFile("send64", ".hgrm");
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(dev.iwarp.bootstrap.IwarpStack.builder().threads(1).build()))) {
            List<String> args = new ArrayList<>();
            for (String a : ReadmeSamplesTest.args(sample.get(0).substring(prompt.length()))) {
                args.add(a.startsWith("127.0.0.1:") ? "127.0.0.1:" + server.port()
                        : a.equals("send64.hgrm") ? hist.toString() : a);
            }
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            assertEquals(0, run(args, out, err), out + "" + err);
            List<String> file = Files.readAllLines(hist);
            List<String> headTail = new ArrayList<>(file.subList(0, 5));
            headTail.addAll(file.subList(file.size() - 3, file.size()));
            assertEquals(sample.subList(2, sample.size()).stream().map(ReadmeOtherSamplesTest::masked).toList(),
                    headTail.stream().map(ReadmeOtherSamplesTest::masked).toList(), "head -5 and tail -3 of --hist");
        } finally {
            Files.deleteIfExists(hist);
        }
    }

    /** A scrape's series: the name with its labels, event-loop numbers masked (their count follows the cores). */
    private static String series(String line) {
        return line.substring(0, line.lastIndexOf(' ')).replaceAll("loop=\"\\d+\"", "loop=\"N\"");
    }

    @Test
    void metricsSampleNamesSeriesAScrapeHas() throws Exception {
        List<String> sample = block("metrics");
        assertTrue(sample.get(0).startsWith("$ curl -s http://127.0.0.1:"), sample.get(0));
        // as serve builds it: a memory budget the meters report
        dev.iwarp.verbs.MemoryBudget budget = ServerMemory.budget(64 << 20);
        try (MetricsFixture f = new MetricsFixture(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                dev.iwarp.bootstrap.IwarpStack.builder().threads(1).memoryBudget(budget), null)) {
            f.metrics.peerMemoryBudget(budget);
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            assertEquals(0, run(List.of("bench", "127.0.0.1:" + f.server.port(), "--op", "read", "--size", "1048576",
                    "--iterations", "20", "--connections", "2", "--warmup", "0"), out, err), out + "" + err);
            List<String> scrape = f.scrape().lines().filter(l -> l.startsWith("iwarp")).toList();
            List<String> real = scrape.stream().map(ReadmeOtherSamplesTest::series).distinct().toList();
            List<String> shown = sample.subList(1, sample.size()).stream().map(ReadmeOtherSamplesTest::series)
                    .distinct().toList();
            for (String s : shown) {
                assertTrue(real.contains(s), s + " is not in a scrape:\n" + String.join("\n", scrape));
            }
            // the sample is a grep of one scrape: its series in the scrape's order
            assertEquals(real.stream().filter(shown::contains).toList(), shown, "the order of the sampled series");
            for (String l : sample.subList(1, sample.size())) {
                Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)); // a value Prometheus can read
            }
        }
    }

    @Test
    void withoutSctpServePrintsTheSampledRefusal() throws Exception {
        List<String> sample = block("no sctp");
        org.junit.jupiter.api.Assumptions.assumeTrue(SctpWire.unavailableReason(IndicationTransport.NATIVE) != null,
                "this machine has SCTP: the README's refusal without it cannot be seen here");
        String prompt = "$ java -jar iwarp-server.jar ";
        assertTrue(sample.get(0).startsWith(prompt), sample.get(0));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertEquals(2, run(ReadmeSamplesTest.args(sample.get(0).substring(prompt.length())), out, err), out + "" + err);
        assertEquals(sample.subList(1, sample.size()), (out + "" + err).lines().toList());
    }

    @Test
    void ibWriteBwServerPrintsTheSampledTable() throws Exception {
        for (List<String> sample : blocks("ib_write_bw server")) { // the root README shows it too
            ibWriteBwServerPrints(sample);
        }
    }

    private static void ibWriteBwServerPrints(List<String> sample) throws Exception {
        String prompt = "$ java -jar iwarp-server/target/iwarp-server.jar ";
        assertTrue(sample.get(0).startsWith(prompt), sample.get(0));
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        List<String> serverArgs = new ArrayList<>(ReadmeSamplesTest.args(sample.get(0).substring(prompt.length())));
        serverArgs.addAll(List.of("-p", Integer.toString(port)));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(() -> run(serverArgs, out, err));
        // our client in place of the VM's stock ib_write_bw: the same test, size and iterations
        List<String> clientArgs = new ArrayList<>(serverArgs.subList(0, serverArgs.indexOf("--bind")));
        clientArgs.addAll(List.of("127.0.0.1", "-p", Integer.toString(port)));
        StringWriter cOut = new StringWriter();
        int client = -1;
        for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); client != 0 && System.nanoTime() < end; ) {
            cOut.getBuffer().setLength(0);
            client = run(clientArgs, cOut, new StringWriter()); // until the server listens
            Thread.sleep(client == 0 ? 0 : 200);
        }
        assertEquals(0, client, cOut.toString());
        assertEquals(0, server.get(60, TimeUnit.SECONDS), out + "" + err);
        // the remote GID is the peer's (siw's in the sample, ours here)
        List<String> got = (out + "" + err).lines().map(ReadmeOtherSamplesTest::masked)
                .map(l -> l.replaceAll("^GID: .*", "GID: G")).collect(Collectors.toList());
        assertEquals(sample.subList(1, sample.size()).stream().map(ReadmeOtherSamplesTest::masked)
                .map(l -> l.replaceAll("^GID: .*", "GID: G")).toList(), got, "ib_write_bw's server output");
    }
}
