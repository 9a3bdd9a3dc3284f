package dev.iwarp.server;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.FirstOctets;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.vitcp.VitcpConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client of one framing against a serve of another: the client names the server's framing and the option that
 * speaks it (from the refusal serve answers in its own framing), and serve logs one line naming what the peer spoke.
 */
class ForeignFramingTest {
    private static RpingServer mpa;
    private static RpingServer vitcp;
    private static RpingServer ift;
    private static final ListAppender<ILoggingEvent> LOG = new ListAppender<>();

    @BeforeAll
    static void servers() throws Exception {
        ServerLimits d = ServerLimits.defaults(); // a TLS client may take more than the 2 s default to say hello
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0).withLimits(new ServerLimits(
                d.maxStartups(), d.maxPerSource(), d.messageDeadlineMs(), d.maxReadSize(), d.sourcePrefixV4(),
                d.sourcePrefixV6(), d.maxStartupsPerSource(), 30_000, d.drainTimeoutSec(), d.allowMarkers(),
                d.tlsHandshakesPerSec()));
        mpa = RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build()));
        vitcp = RpingServer.start(config, ServeOptions.on(VitcpWire.server(VitcpConfig.defaults(),
                VitcpWire.DEFAULT_DISCRIMINATOR.getBytes(StandardCharsets.US_ASCII), false, 1)));
        WireOptions wire = new WireOptions();
        new picocli.CommandLine(wire).parseArgs("--wire", "ift");
        ift = RpingServer.start(config, ServeOptions.on(IwarpStack.builder().threads(1).build())
                .framing(wire.ift.framing(config.startupTimeoutMs(), config.ird(), config.ord())));
        ch.qos.logback.classic.Logger l = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory
                .getLogger(FirstOctets.class);
        LOG.setContext(l.getLoggerContext());
        LOG.start();
        l.addAppender(LOG);
    }

    @AfterAll
    static void close() {
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(FirstOctets.class)).detachAppender(LOG);
        mpa.close();
        vitcp.close();
        ift.close();
    }

    private static void assertOneLine(ToolRun r, String line) {
        assertEquals(1, r.code(), r.err() + r.out());
        List<String> lines = r.out().lines().toList();
        assertEquals("ping failed: " + line, lines.get(0), r.out());
    }

    /** The serve side's line about the last peer (a peer's octets reach serve before its refusal reaches the client). */
    private static String lastServeLine() {
        synchronized (LOG.list) {
            return LOG.list.get(LOG.list.size() - 1).getFormattedMessage();
        }
    }

    @Test
    void vitcpAndIftClientsAgainstAnMpaServe() {
        String at = "127.0.0.1:" + mpa.port();
        assertOneLine(run("ping", at, "--wire", "vitcp", "-C", "1"), "the server at " + at + " speaks MPA; use --wire iwarp");
        assertTrue(lastServeLine().matches("127\\.0\\.0\\.1:\\d+ speaks VI/TCP, not MPA \\(--wire iwarp\\); "
                + "answered with an MPA refusal"), lastServeLine());
        assertOneLine(run("ping", at, "--wire", "ift", "-C", "1"), "the server at " + at + " speaks MPA; use --wire iwarp");
        assertTrue(lastServeLine().contains(" speaks IFT, not MPA"), lastServeLine());
        assertEquals(0, vitcp.accepted() + mpa.accepted());
    }

    @Test
    void mpaAndIftClientsAgainstAVitcpServe() {
        String at = "127.0.0.1:" + vitcp.port();
        assertOneLine(run("ping", at, "-C", "1"), "the server at " + at + " speaks VI/TCP; use --wire vitcp");
        assertTrue(lastServeLine().contains(" speaks MPA, not VI/TCP (--wire vitcp); answered with a VI/TCP refusal"),
                lastServeLine());
        assertOneLine(run("ping", at, "--wire", "ift", "-C", "1"),
                "the server at " + at + " speaks VI/TCP; use --wire vitcp");
    }

    @Test
    void benchNamesTheServersFramingToo() {
        String at = "127.0.0.1:" + vitcp.port();
        ToolRun r = run("bench", at, "--timeout", "5000", "--iterations", "1", "--warmup", "0");
        assertEquals(1, r.code(), r.err() + r.out());
        assertEquals("bench: the server at " + at + " speaks VI/TCP; use --wire vitcp",
                r.err().lines().reduce((x, y) -> y).orElse(""), r.err() + r.out());
        String mpaAt = "127.0.0.1:" + mpa.port();
        ToolRun v = run("bench", mpaAt, "--wire", "vitcp", "--timeout", "5000", "--iterations", "1", "--warmup", "0");
        assertEquals(1, v.code(), v.err() + v.out());
        assertEquals("bench: the server at " + mpaAt + " speaks MPA; use --wire iwarp",
                v.err().lines().reduce((x, y) -> y).orElse(""), v.err() + v.out());
    }

    @Test
    void mpaAndVitcpClientsAgainstAnIftServe() {
        String at = "127.0.0.1:" + ift.port();
        assertOneLine(run("ping", at, "-C", "1"), "the server at " + at + " speaks IFT; use --wire ift");
        assertOneLine(run("ping", at, "--wire", "vitcp", "-C", "1"), "the server at " + at + " speaks IFT; use --wire ift");
        assertTrue(lastServeLine().contains(" speaks VI/TCP, not IFT (--wire ift); answered with an IFT refusal"),
                lastServeLine());
    }

    @Test
    void probeNamesTheServersFramingWithoutAJavaClass() {
        // before: "result: FAIL: cannot connect: dev.iwarp.mpa.MpaException: MPA error 4 (...): key is not an MPA key"
        String at = "127.0.0.1:" + vitcp.port();
        ToolRun r = run("probe", at, "--case", "write-invalid-stag");
        assertEquals(1, r.code(), r.err() + r.out());
        assertEquals(List.of("probe write-invalid-stag against " + at + ": RDMA Write to unadvertised STag 0x00dead00 "
                + "(16 octets)", "result: FAIL: the server at " + at + " speaks VI/TCP; use --wire vitcp"),
                r.out().lines().toList());
        String iftAt = "127.0.0.1:" + ift.port();
        ToolRun i = run("probe", iftAt, "--case", "send-too-long");
        assertEquals(1, i.code(), i.err() + i.out());
        assertEquals("result: FAIL: the server at " + iftAt + " speaks IFT; use --wire ift",
                i.out().lines().reduce((x, y) -> y).orElse(""), i.out());
    }

    @Test
    void anIbWriteBwClientAgainstServeSaysWhatItWaitedFor() {
        // serve speaks MPA, so the connection is made; then no perftest version ever comes
        ToolRun r = run("ib_write_bw", "-R", "-s", "4096", "-n", "20", "--timeout", "2000", "127.0.0.1", "-p",
                Integer.toString(mpa.port()));
        assertEquals(1, r.code(), r.err() + r.out());
        assertEquals("ib_write_bw: nothing came within 2000 ms while waiting for the peer's version (control message "
                + "1): is the peer perftest's server (or ours) running the same test with the same options?",
                (r.out() + r.err()).lines().reduce((x, y) -> y).orElse(""), r.out() + r.err());
    }

    @Test
    void aTlsClientAgainstAPlainServe(@TempDir Path dir) throws Exception {
        Path psk = dir.resolve("psk");
        Files.writeString(psk, "node1:00112233445566778899aabbccddeeff\n", StandardCharsets.US_ASCII);
        String at = "127.0.0.1:" + mpa.port();
        assertOneLine(run("ping", at, "--tls", "--psk-file", psk.toString(), "-C", "1"),
                "the server at " + at + " speaks MPA without TLS; leave out --tls");
        assertTrue(lastServeLine().contains(" speaks TLS, not MPA (--wire iwarp)"), lastServeLine());
    }
}
