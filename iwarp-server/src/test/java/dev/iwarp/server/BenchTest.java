package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.BlockingCompletions;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bench} against an in-process {@code serve}: the target region from the Reply Private Data, and echoes. */
class BenchTest {
    private RpingServer server;
    private IwarpStack clientStack;

    @BeforeEach
    void start() throws Exception {
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(64 * 1024).withSharedTarget(true),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
        clientStack = IwarpStack.builder().threads(1).build();
    }

    @AfterEach
    void stop() {
        clientStack.close();
        server.close();
    }

    private static byte[] pattern(int size) {
        byte[] p = new byte[size];
        for (int i = 0; i < size; i++) {
            p[i] = (byte) (i * 31 + 7); // Bench's source data without --verify
        }
        return p;
    }

    private record Run(int code, String out, String err) {
    }

    private Run bench(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "bench";
        all[1] = "127.0.0.1:" + server.localAddress().getPort();
        System.arraycopy(args, 0, all, 2, args.length);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(all, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void writesLandInTheAdvertisedTargetRegion() throws Exception {
        BenchResult r = Bench.run(clientStack, server.localAddress(), Bench.Op.write, 4096, 200, 0, 8, false, 10_000);
        assertEquals(200, r.iterations());
        assertEquals(200L * 4096, r.bytes());
        assertEquals(200, r.latency().getTotalCount());
        assertEquals(8, r.depth());
        byte[] target = new byte[4096];
        server.target().memory().getBytes(0, target);
        assertArrayEquals(pattern(4096), target);
    }

    @Test
    void readsRunWithTheNegotiatedOrd() throws Exception {
        BenchResult r = Bench.run(clientStack, server.localAddress(), Bench.Op.read, 8192, 50, 0, 4, true, 10_000);
        assertEquals(50, r.iterations());
        assertTrue(r.crc());
        assertEquals("MPA Rev 2 CRC on", r.summary());
        assertEquals(4, r.readDepth(), "client ORD = depth, granted by serve's IRD 16");
        assertEquals(4, r.depth());
    }

    @Test
    void sendsPipelineOnTheReceivesServeGrants() throws Exception {
        BenchResult r = Bench.run(clientStack, server.localAddress(), Bench.Op.send, 100, 300, 0, 8, false, 10_000);
        assertEquals(300, r.iterations());
        assertEquals(8, r.depth(), "serve posted 8 receives for the bench hello");
        RpingSession s = server.lastSession();
        assertTrue(s.awaitCounts(0, 0, 301, 10_000), "300 echoes and the hello's answer");
        assertEquals(300, s.echoes());
    }

    @Test
    void aConnectionThatStopsCompletingEndsTheRunAfterItsTimeout() throws Exception {
        server.close();
        // 1,000 Read Response octets a second after a 64 KiB burst: the first 1 MiB Read would take 16 minutes
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(1 << 20),
                ServeOptions.on(IwarpStack.builder().threads(1).readResponseRate(1_000).build()));
        IOException e = assertThrows(IOException.class,
                () -> Bench.run(clientStack, server.localAddress(), Bench.Op.read, 1 << 20, 4, 0, 1, false, 500));
        assertEquals("no completion on connection 0 within 500 ms", e.getMessage());
    }

    @Test
    void aRunLongerThanTheTimeoutGoesOnWhileItsConnectionCompletes() throws Exception {
        server.close();
        // 256 KiB of Read Responses a second: each 64 KiB Read completes 250 ms after the last, 8 take ~1.75 s
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(64 * 1024),
                ServeOptions.on(IwarpStack.builder().threads(1).readResponseRate(256 * 1024).build()));
        long start = System.nanoTime();
        BenchResult r = Bench.run(clientStack, server.localAddress(), Bench.Op.read, 64 * 1024, 8, 0, 1, false, 1_000);
        assertEquals(8, r.iterations());
        assertTrue(System.nanoTime() - start > 1_000_000_000L, "the run outlasted the timeout");
    }

    @Test
    void serveBoundsTheReceivesItGrants() {
        assertEquals(BenchHello.MAX_DEPTH, BenchHello.grant(64, 1000));
        assertEquals(8, BenchHello.grant(65536, 1000), "1 MiB of ring at most, two slots per granted receive");
        assertEquals(3, BenchHello.grant(65536, 3));
        assertEquals(0, BenchHello.grant(65537, 3));
        assertEquals(0, BenchHello.grant(0, 3));
    }

    @Test
    void serveAnswersOneHelloPerConnectionAndEchoesAnyLaterOne() throws Exception {
        ClientWire wire = IwarpWire.client(clientStack);
        WireDomain domain = wire.allocDomain();
        ByteBuf memory = PooledByteBufAllocator.DEFAULT.directBuffer(4 * BenchHello.LENGTH);
        WireRegion region = domain.register(memory, WireAccess.LOCAL_WRITE);
        BlockingCompletions cq = new BlockingCompletions();
        WireConnection conn = wire.connect(server.localAddress(), domain, false, 1, cq, c -> { }, 10_000);
        try {
            // a refused hello (size 0: no receives) leaves the connection working with its one receive
            BenchHello.writeRequest(memory, 0, 0, 8);
            conn.postRecv(1, region, 2 * BenchHello.LENGTH, BenchHello.LENGTH);
            conn.postSend(2, region, 0, BenchHello.LENGTH);
            assertEquals(BenchHello.LENGTH, cq.take(true, 10_000, "the answer").byteLength());
            assertTrue(BenchHello.isAnswer(memory, 2 * BenchHello.LENGTH, BenchHello.LENGTH));
            assertEquals(0, BenchHello.depth(memory, 2 * BenchHello.LENGTH));
            // a second hello is an ordinary Send: echoed, and serve allocates nothing more for it
            BenchHello.writeRequest(memory, 0, 100, 8);
            conn.postRecv(3, region, 2 * BenchHello.LENGTH, BenchHello.LENGTH);
            conn.postSend(4, region, 0, BenchHello.LENGTH);
            assertEquals(BenchHello.LENGTH, cq.take(true, 10_000, "the echo").byteLength());
            assertTrue(BenchHello.isRequest(memory, 2 * BenchHello.LENGTH, BenchHello.LENGTH), "echoed unchanged");
            assertTrue(server.lastSession().awaitCounts(0, 0, 2, 10_000));
            assertEquals(1, server.lastSession().echoes());
        } finally {
            conn.channel().close().awaitUninterruptibly();
            region.deregister();
            memory.release();
        }
    }

    @Test
    void anEchoOnlyServeEchoesTheHelloAndSendsRunAtDepthOne() throws Exception {
        server.close();
        server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0).withEchoOnly(true),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
        BenchResult r = Bench.run(clientStack, server.localAddress(), Bench.Op.send, 100, 30, 0, 8, false, 10_000);
        assertEquals(30, r.iterations());
        assertEquals(1, r.depth());
    }

    @Test
    void writeBeyondTheTargetRegionIsRefusedLocally() {
        IOException e = assertThrows(IOException.class, () -> Bench.run(clientStack, server.localAddress(),
                Bench.Op.write, 64 * 1024 + 1, 1, 0, 1, false, 10_000));
        assertTrue(e.getMessage().contains("exceeds the server's target region"), e.getMessage());
    }

    @Test
    void warmupIsPostedButNotCounted() throws Exception {
        BenchSettings s = BenchSettings.of(Bench.Op.send, 200, 40, 4).withWarmup(25, 0);
        BenchResult r = Bench.run(IwarpWire.client(clientStack), server.localAddress(), s);
        assertEquals(40, r.iterations());
        assertEquals(40, r.latency().getTotalCount());
        RpingSession session = server.lastSession();
        assertTrue(session.awaitCounts(0, 0, 66, 10_000));
        assertEquals(65, session.echoes(), "25 warm-up and 40 measured Sends reached serve");
    }

    @ParameterizedTest
    @CsvSource({"write, 1", "write, 4", "read, 1", "read, 4", "send, 1", "send, 4"})
    void verifyChecksEveryOctet(String op, int connections) {
        int size = op.equals("send") ? 1000 : 4093; // not a multiple of 8: the pattern's tail octets too
        Run run = bench("--op", op, "--size", String.valueOf(size), "--iterations", "100", "--depth", "4",
                "--connections", String.valueOf(connections), "--warmup", "10", "--verify");
        assertEquals(0, run.code(), run.err());
        long octets = (100L + 10) * connections * size; // warm-up checked too
        assertTrue(run.out().contains(" Verify          : " + octets + " octets checked (warm-up included), 0 mismatches"), run.out());
        assertTrue(run.out().contains("iterations " + 100 * connections + ","), run.out());
    }

    @ParameterizedTest
    @EnumSource(Bench.Op.class)
    void verifyCatchesAFlippedOctet(Bench.Op op) {
        int size = 3000;
        BenchSettings s = BenchSettings.of(op, size, 100, 4).withVerify(true, 17);
        IOException e = assertThrows(IOException.class,
                () -> Bench.run(IwarpWire.client(clientStack), server.localAddress(), s));
        assertTrue(e.getMessage().startsWith("verify failed: connection 0, iteration 17: octet 1500 of 3000 is 0x"),
                e.getMessage());
        BenchSettings clean = s.withVerify(true, -1);
        assertEquals(100, assertDoesNotThrowRun(clean).iterations(), "the same run without the flip passes");
    }

    private BenchResult assertDoesNotThrowRun(BenchSettings s) {
        try {
            return Bench.run(IwarpWire.client(clientStack), server.localAddress(), s);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void verifyRefusesATargetRegionTooSmallForItsConnections() {
        Run run = bench("--op", "read", "--size", "40000", "--iterations", "100", "--verify", "--warmup", "0",
                "--connections", "2"); // 64 KiB / 2 connections < 40000: no slot, refused before posting
        assertEquals(1, run.code());
        assertTrue(run.err().startsWith("bench: --verify needs 40000 octets of the server's target region per connection"),
                run.err());
    }

    @Test
    void headerBeforeTheRunTableAfterAndProgressOnStderr() {
        Run run = bench("--op", "write", "--size", "2048", "--duration", "2.5", "--depth", "4", "--connections", "3",
                "--warmup", "0.2s");
        assertEquals(0, run.code(), run.err());
        String text = run.out();
        assertTrue(text.startsWith("bench write: 2048 octets x 2.50 s, depth 4, 3 connection(s), MPA Rev 2 CRC off\n"),
                text);
        assertTrue(text.contains(" Connection      : MPA Rev 2, CRC off, IRD 1 ORD 1, MULPDU "), text);
        assertTrue(text.matches("(?s).* Connection end  : MPA Rev 2, CRC off, IRD 1 ORD 1, MULPDU \\d+\n.*"), text);
        assertTrue(text.indexOf(" Connection end  : ") > text.indexOf(" Cost (client)   : "), text);
        assertTrue(text.contains(" Warm-up         : 0.200 s (not measured)"), text);
        int table = text.indexOf(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]    MsgRate[Mpps]");
        assertTrue(table > text.indexOf(" Verify          : off"), text);
        assertTrue(text.contains("t_min[usec]   t_typical[usec]   t_avg[usec]   t_p99[usec]   t_p99.9[usec]   t_max[usec]"),
                text);
        assertTrue(text.matches("(?s).* Cost \\(client\\)   : \\d+\\.\\d\\d CPU usec/msg, \\d+ bytes allocated/msg.*"), text);
        assertTrue(run.err().matches("(?s)bench: +[12] s +\\d+\\.\\d\\d MB/sec +\\d\\.\\d{6} Mpps +\\d+ iterations\n.*"),
                run.err());
        java.util.regex.Matcher progress = java.util.regex.Pattern.compile("bench: +\\d+ s .* (\\d+) iterations\n")
                .matcher(run.err());
        long shown = 0;
        while (progress.find()) {
            shown = Long.parseLong(progress.group(1));
        }
        assertTrue(shown > 0, "progress counts the measured messages: " + run.err());
        assertTrue(!text.contains(" 2048       0 ") && !text.matches("(?s).*\\n 2048 +\\d+ +0\\.00 .*"),
                "peak over 250 ms measured: " + text);
        assertEquals(5L, server.accepted(), "one server session per connection, and one per cost question (2)");
    }

    @Test
    void severalConnectionsAreSummedAndTheirLatenciesMerged() {
        Run run = bench("--op", "write", "--size", "2048", "--iterations", "60", "--depth", "4", "--connections", "3",
                "--warmup", "0");
        assertEquals(0, run.code(), run.err());
        assertTrue(run.out().contains("2048 octets x 180, depth 4, 3 connection(s)"), run.out());
        assertTrue(run.out().contains("  bytes 368640, iterations 180,"), run.out());
        assertTrue(run.out().contains(" 2048       180            "), run.out());
    }

    @Test
    void histWritesHdrHistogramsPercentileFormat(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws IOException {
        java.nio.file.Path file = dir.resolve("write.hgrm");
        Run run = bench("--op", "write", "--size", "1024", "--iterations", "300", "--warmup", "0", "--hist",
                file.toString());
        assertEquals(0, run.code(), run.err());
        java.util.List<String> lines = java.nio.file.Files.readAllLines(file);
        // HdrHistogram's outputPercentileDistribution: a column header, rows, then the summary lines
        assertEquals(java.util.List.of("Value", "Percentile", "TotalCount", "1/(1-Percentile)"),
                java.util.List.of(lines.get(0).trim().split("\\s+")));
        String summary = lines.stream().filter(l -> l.startsWith("#[Max")).findFirst().orElseThrow();
        assertTrue(summary.matches(".*Total count\\s*=\\s*300\\].*"), summary);
        double previousValue = 0;
        long previousCount = 0;
        int rows = 0;
        for (String line : lines.subList(2, lines.size())) {
            if (line.startsWith("#")) {
                break;
            }
            String[] f = line.trim().split("\\s+");
            double value = Double.parseDouble(f[0]);
            long count = Long.parseLong(f[2]);
            assertTrue(value >= previousValue && count >= previousCount, line); // a cumulative distribution
            previousValue = value;
            previousCount = count;
            rows++;
        }
        assertTrue(rows > 5, "percentile rows: " + rows);
        assertEquals(300, previousCount);
        // the values are usec: the text report's t_max in usec is the last row's value
        double maxUsec = Double.parseDouble(summary.replaceAll(".*Max\\s*=\\s*([0-9.]+).*", "$1"));
        assertEquals(maxUsec, previousValue, maxUsec * 0.01 + 0.01);
    }

    @Test
    void jsonAndCsvCarryTheSameFigures() {
        Run json = bench("--op", "send", "--size", "64", "--iterations", "500", "--depth", "16", "--warmup", "100",
                "--output", "json");
        assertEquals(0, json.code(), json.err());
        java.util.Map<String, String> j = BenchOutputParser.json(json.out().trim());
        assertEquals("send", j.get("op"));
        assertEquals("500", j.get("iterations"));
        assertEquals("64", j.get("bytes"));
        assertEquals("16", j.get("depth"));
        assertTrue(j.get("connection").startsWith("MPA Rev 2, CRC off"), j.toString());
        assertTrue(Double.parseDouble(j.get("msg_rate_mpps")) > 0, j.toString());
        assertTrue(Double.parseDouble(j.get("t_p99_usec")) >= Double.parseDouble(j.get("t_typical_usec")), j.toString());
        assertTrue(Double.parseDouble(j.get("client_cpu_usec_per_msg")) > 0, j.toString());
        assertTrue(json.err().startsWith("bench send: 64 octets x 500, depth 16"), "header on stderr: " + json.err());

        Run csv = bench("--op", "read", "--size", "4096", "--iterations", "200", "--warmup", "0", "--output", "csv");
        assertEquals(0, csv.code(), csv.err());
        java.util.Map<String, String> c = BenchOutputParser.csv(csv.out());
        assertEquals(j.keySet(), c.keySet(), "json and csv name the same fields");
        assertEquals("read", c.get("op"));
        assertEquals("200", c.get("iterations"));
        assertEquals(Double.parseDouble(c.get("bw_average_mb_per_sec")),
                Double.parseDouble(c.get("msg_rate_mpps")) * 1e6 * 4096 / (1 << 20), 0.01 * Double.parseDouble(
                        c.get("bw_average_mb_per_sec")));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--iterations|-3|bench: --iterations must be >= 1: -3",
            "--iterations|0|bench: --iterations must be >= 1: 0",
            "--depth|0|bench: --depth must be 1..1024: 0",
            "--depth|1025|bench: --depth must be 1..1024: 1025",
            "--duration|-1|bench: --duration must be > 0 and <= 1000000 s: -1.0",
            "--duration|0|bench: --duration must be > 0 and <= 1000000 s: 0.0",
            "--size|-1|bench: --size must be 1..1073741824: -1",
            "--connections|0|bench: --connections must be 1..10000: 0",
            "--warmup|-5|bench: --warmup must be 0..3600 s or a count >= 0: -5",
            "--warmup|abc|bench: --warmup must be stable, a count (1000) or seconds (2s): abc",
            "--output|xml|bench: --output must be text, json or csv: xml",
            "--timeout|0|bench: --timeout must be 1..3600000 ms: 0"})
    void invalidValuesExitTwoWithOneLine(String option, String value, String message) {
        Run run = bench(option, value);
        assertEquals(2, run.code(), run.err());
        assertEquals(message + "\n", run.err().replace("\r\n", "\n"));
        assertEquals("", run.out());
    }

    @Test
    void sendSizeRangeAndTheAdvertisementSize() {
        Run big = bench("--op", "send", "--size", "65537");
        assertEquals(2, big.code());
        assertEquals("bench: --size must be 1..65536 for send: 65537\n", big.err());
        Run sixteen = bench("--op", "send", "--size", "16");
        assertEquals(2, sixteen.code());
        assertTrue(sixteen.err().startsWith("bench: --size 16 is an rping advertisement"), sixteen.err());
    }
}
