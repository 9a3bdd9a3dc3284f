package dev.iwarp.server.perftest;

import dev.iwarp.server.Main;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Ours against ours on 127.0.0.1: each test, several QPs, -D, the version policy, and mismatched peers. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PerftestLoopbackTest {

    record Side(int rc, String out, String err) {
        String all() {
            return out + err;
        }
    }

    record Pair(Side server, Side client) {
    }

    static final class Options {
        int size;
        long iterations;
        int duration;
        boolean all;
        int qps = 1;
        long timeoutMs = 20_000;
        PerftestVersion announce = PerftestVersion.OURS;

        Options(PerftestTest t) {
            size = t.bandwidth() ? 4096 : 64;
            iterations = t.bandwidth() ? 20 : 30;
        }

        PerftestSettings settings(PerftestTest t, boolean client, int port) {
            return new PerftestSettings(t, client, new InetSocketAddress("127.0.0.1", port), size, iterations, duration,
                    all, t.defaultTxDepth(iterations), PerftestTest.defaultRxDepth(iterations), qps, 128, false,
                    timeoutMs, null);
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static Side side(PerftestSettings s, PerftestVersion announce, StringWriter out, StringWriter err) {
        int rc = new PerftestRun(s, new PrintWriter(out, true), new PrintWriter(err, true), announce).run();
        return new Side(rc, out.toString(), err.toString());
    }

    static Pair pair(PerftestTest serverTest, Options server, PerftestTest clientTest, Options client) throws Exception {
        int port = freePort();
        StringWriter sOut = new StringWriter();
        StringWriter sErr = new StringWriter();
        CompletableFuture<Side> srv = CompletableFuture.supplyAsync(
                () -> side(server.settings(serverTest, false, port), server.announce, sOut, sErr));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!sOut.toString().contains("listening on") && !srv.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        Side c = side(client.settings(clientTest, true, port), client.announce, new StringWriter(), new StringWriter());
        return new Pair(srv.get(60, TimeUnit.SECONDS), c);
    }

    static Pair pair(PerftestTest t, Options o) throws Exception {
        return pair(t, o, t, o);
    }

    static long lines(String text, String regex) {
        Pattern p = Pattern.compile(regex);
        return text.lines().filter(l -> p.matcher(l).find()).count();
    }

    @ParameterizedTest
    @EnumSource(PerftestTest.class)
    void eachTestRunsOursAgainstOurs(PerftestTest t) throws Exception {
        Pair p = pair(t, new Options(t));
        assertEquals(0, p.client().rc(), p.client().all());
        assertEquals(0, p.server().rc(), p.server().all());
        String bw = "^ 4096\\s+20\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9.]+$";
        String lat = "^ 64\\s+30(\\s+[0-9.]+){7}\\s*$";
        assertEquals(1, lines(p.client().out(), t.bandwidth() ? bw : lat), p.client().out());
        // perftest's read_lat server prints no result; the others print theirs, or (write/read_bw) the client's
        assertEquals(t == PerftestTest.READ_LAT ? 0 : 1, lines(p.server().out(), t.bandwidth() ? bw : lat),
                p.server().out());
        if (t == PerftestTest.WRITE_BW || t == PerftestTest.READ_BW) {
            String line = p.client().out().lines().filter(l -> l.startsWith(" 4096 ")).findFirst().orElseThrow();
            assertTrue(p.server().out().contains(line), "the server prints the client's report verbatim");
        }
        assertTrue(p.client().out().contains(t.title()));
        assertTrue(p.client().err().isEmpty(), p.client().err());
        assertTrue(p.server().err().isEmpty(), p.server().err());
    }

    @ParameterizedTest
    @EnumSource(value = PerftestTest.class, names = {"WRITE_BW", "READ_BW", "SEND_BW"})
    void severalQps(PerftestTest t) throws Exception {
        Options o = new Options(t);
        o.qps = 3;
        Pair p = pair(t, o);
        assertEquals(0, p.client().rc(), p.client().all());
        assertEquals(0, p.server().rc(), p.server().all());
        assertTrue(p.client().out().contains(" Number of qps   : 3"));
    }

    @Test
    void durationRunsForSecondsAndReportsTheCount() throws Exception {
        Options o = new Options(PerftestTest.WRITE_BW);
        o.duration = 1;
        Pair p = pair(PerftestTest.WRITE_BW, o);
        assertEquals(0, p.client().rc(), p.client().all());
        assertEquals(0, p.server().rc(), p.server().all());
        assertEquals(1, lines(p.client().out(), "^ 4096\\s+[1-9][0-9]*\\s+[0-9.]+"), p.client().out());
    }

    @Test
    void aPeerOlderThan570IsRefusedWithOneLine() throws Exception {
        Options client = new Options(PerftestTest.WRITE_BW);
        client.announce = PerftestVersion.parse("5.69");
        Pair p = pair(PerftestTest.WRITE_BW, new Options(PerftestTest.WRITE_BW), PerftestTest.WRITE_BW, client);
        assertEquals(1, p.server().rc());
        assertEquals("ib_write_bw: the peer runs perftest 5.69; versions older than 5.70 use another control flow "
                + "and are not supported", p.server().err().strip());
        assertEquals(1, p.client().rc());
        assertEquals(1, p.client().err().lines().count(), p.client().err());
    }

    @Test
    void aPeerOf629GetsWideDestsAndItsWideDestsDecode() throws Exception {
        Options client = new Options(PerftestTest.READ_BW);
        client.announce = PerftestVersion.parse("6.29");
        Pair p = pair(PerftestTest.READ_BW, new Options(PerftestTest.READ_BW), PerftestTest.READ_BW, client);
        assertEquals(0, p.client().rc(), p.client().all());
        assertEquals(0, p.server().rc(), p.server().all());
    }

    @Test
    void aPeerOf628GetsItsNegotiationEchoed() throws Exception {
        Options client = new Options(PerftestTest.SEND_BW);
        client.announce = PerftestVersion.parse("6.28");
        Pair p = pair(PerftestTest.SEND_BW, new Options(PerftestTest.SEND_BW), PerftestTest.SEND_BW, client);
        assertEquals(0, p.client().rc(), p.client().all());
        assertEquals(0, p.server().rc(), p.server().all());
    }

    @Test
    void aSendLargerThanTheServersSizeEndsBothSidesWithAnError() throws Exception {
        Options server = new Options(PerftestTest.SEND_BW);
        server.size = 64;
        server.timeoutMs = 5000;
        Options client = new Options(PerftestTest.SEND_BW);
        client.timeoutMs = 5000;
        Pair p = pair(PerftestTest.SEND_BW, server, PerftestTest.SEND_BW, client);
        assertEquals(1, p.server().rc());
        assertEquals(1, p.client().rc());
        assertTrue(p.server().err().contains("Completion with error at server"), p.server().err());
        assertEquals(1, p.server().err().lines().count(), p.server().err());
    }

    @Test
    void fewerSendsThanTheServerExpectsTimesOut() throws Exception {
        Options server = new Options(PerftestTest.SEND_BW);
        server.timeoutMs = 3000;
        Options client = new Options(PerftestTest.SEND_BW);
        client.iterations = 10;
        client.timeoutMs = 3000;
        Pair p = pair(PerftestTest.SEND_BW, server, PerftestTest.SEND_BW, client);
        assertEquals(1, p.server().rc());
        assertEquals(1, p.client().rc());
        // whichever side's timeout ends first: the server's own, or the client's closing the connections
        assertTrue(p.server().err().contains("(10 of 20 arrived)"), p.server().err());
    }

    @Test
    void differentTestsOnBothEndsFailWithinTheTimeout() throws Exception {
        Options server = new Options(PerftestTest.WRITE_BW);
        server.timeoutMs = 3000;
        Options client = new Options(PerftestTest.WRITE_LAT);
        client.timeoutMs = 3000;
        Pair p = pair(PerftestTest.WRITE_BW, server, PerftestTest.WRITE_LAT, client);
        assertEquals(1, p.server().rc());
        assertEquals(1, p.client().rc());
        assertEquals(1, p.client().err().lines().count(), p.client().err());
    }

    @Test
    void moreQpsThanTheServerTakesAreRefused() throws Exception {
        Options server = new Options(PerftestTest.WRITE_BW);
        server.timeoutMs = 3000;
        Options client = new Options(PerftestTest.WRITE_BW);
        client.qps = 2;
        client.timeoutMs = 3000;
        Pair p = pair(PerftestTest.WRITE_BW, server, PerftestTest.WRITE_BW, client);
        assertEquals(1, p.client().rc(), p.client().all());
        // the client's address as the tools write it: "127.0.0.1:41234", not InetSocketAddress's "/127.0.0.1:41234"
        assertTrue(p.server().err().matches("(?s).*: refused a connection from 127\\.0\\.0\\.1:\\d+ (beyond -q 1|while a test runs).*"),
                p.server().err());
    }

    @Test
    void commandLineRequiresRdmaCmAndChecksOptions() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = Main.run(new String[] {"ib_write_bw", "-s", "64", "127.0.0.1"}, new PrintWriter(out, true),
                new PrintWriter(err, true));
        assertEquals(2, rc);
        assertEquals("ib_write_bw: only RDMA-CM mode is supported: add -R (on both sides)", err.toString().strip());
        err.getBuffer().setLength(0);
        rc = Main.run(new String[] {"ib_send_bw", "-R", "-D", "2", "127.0.0.1"}, new PrintWriter(out, true),
                new PrintWriter(err, true));
        assertEquals(2, rc);
        assertTrue(err.toString().contains("-D is supported by ib_write_bw, ib_read_bw and ib_read_lat"), err.toString());
        err.getBuffer().setLength(0);
        rc = Main.run(new String[] {"ib_read_lat", "-h"}, new PrintWriter(out, true), new PrintWriter(err, true));
        assertEquals(0, rc);
        assertTrue(out.toString().contains("--report_gbits") && out.toString().contains("Accepted and ignored"),
                out.toString());
    }

    @Test
    void insideTlsWithAPreSharedKey(@TempDir Path dir) throws Exception {
        Path psk = dir.resolve("psk");
        Files.writeString(psk, "node1:00112233445566778899aabbccddeeff\n", StandardCharsets.US_ASCII);
        int port = freePort();
        StringWriter sOut = new StringWriter();
        StringWriter sErr = new StringWriter();
        CompletableFuture<Integer> srv = CompletableFuture.supplyAsync(() -> Main.run(new String[] {"ib_send_bw", "-R",
                "--bind", "127.0.0.1", "-p", String.valueOf(port), "-s", "4096", "-n", "20", "--tls", "--psk-file",
                psk.toString()}, new PrintWriter(sOut, true), new PrintWriter(sErr, true)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!sOut.toString().contains("listening on") && !srv.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        StringWriter cOut = new StringWriter();
        StringWriter cErr = new StringWriter();
        int rc = Main.run(new String[] {"ib_send_bw", "-R", "-p", String.valueOf(port), "-s", "4096", "-n", "20",
                "--tls", "--psk-file", psk.toString(), "127.0.0.1"}, new PrintWriter(cOut, true), new PrintWriter(cErr, true));
        assertEquals(0, rc, cOut + "" + cErr);
        assertEquals(0, srv.get(60, TimeUnit.SECONDS), sOut + "" + sErr);
        assertEquals(1, lines(cOut.toString(), "^ 4096\\s+20\\s+[0-9.]+"), cOut.toString());
    }
}
