package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.iwarp.bootstrap.IwarpStack;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --log-format json}: every line about a connection carries its id, peer and wire (MDC), a
 * Terminate's line carries the Terminate's fields, and the JSON encoder writes them as one object per line.
 */
class ServeJsonLogTest {
    @Test
    void connectionLinesCarryConnPeerWireAndTerminateLinesTheTerminateFields() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()));
             IwarpStack client = IwarpStack.builder().threads(1).build();
             Capture log = new Capture("dev.iwarp")) {
            StringWriter text = new StringWriter();
            // an RDMA Write to an STag serve never advertised: serve sends Terminate DDP 1/1/0x00
            int code = ProbeCommand.run(client, server.localAddress(), ProbeCommand.Case.parse("write-invalid-stag"),
                    new ClientMpaOptions(), RpingSession.BUFFER_SIZE + 1, 10_000, new PrintWriter(text, true));
            assertEquals(ProbeCommand.EXIT_AS_RFC, code, text::toString);
            long deadline = System.nanoTime() + 5_000_000_000L;
            ILoggingEvent terminate = null;
            ILoggingEvent closed = null;
            while (System.nanoTime() < deadline && (terminate == null || closed == null)) {
                for (ILoggingEvent e : log.events()) {
                    String m = e.getFormattedMessage();
                    if (m.contains("sending Terminate") && !e.getMDCPropertyMap().isEmpty()) {
                        terminate = e;
                    } else if (m.contains(" closed: ") && e.getLoggerName().equals(RpingServer.class.getName())) {
                        closed = e;
                    }
                }
                Thread.sleep(20);
            }
            assertNotNull(terminate, () -> "no Terminate line with MDC: " + lines(log));
            assertNotNull(closed, () -> "no closed line: " + lines(log));
            Map<String, String> mdc = terminate.getMDCPropertyMap();
            assertEquals("iwarp", mdc.get(ConnectionLogContext.WIRE), mdc::toString);
            assertTrue(mdc.get(ConnectionLogContext.PEER).startsWith("127.0.0.1:"), mdc::toString);
            assertEquals(8, mdc.get(ConnectionLogContext.CONN).length(), mdc::toString); // Netty's short channel id
            Map<String, String> connection = Map.of(ConnectionLogContext.CONN, mdc.get(ConnectionLogContext.CONN),
                    ConnectionLogContext.PEER, mdc.get(ConnectionLogContext.PEER), ConnectionLogContext.WIRE, "iwarp");
            assertEquals(connection, closed.getMDCPropertyMap(), "the same connection's close line");
            assertEquals(Map.of("terminate.direction", "sent", "terminate.layer", "1", "terminate.etype", "1",
                    "terminate.code", "0x00"), mdc.entrySet().stream().filter(e -> e.getKey().startsWith("terminate."))
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));

            String json = new String(LogOptions.jsonEncoder(new LoggerContext()).encode(terminate),
                    StandardCharsets.UTF_8);
            assertTrue(json.endsWith("\n") && json.indexOf('\n') == json.length() - 1, "one line: " + json);
            assertTrue(json.startsWith("{") && json.trim().endsWith("}"), json);
            assertTrue(json.contains("\"level\":\"WARN\""), json);
            assertTrue(json.contains("\"conn\":\"" + mdc.get("conn") + "\""), json);
            assertTrue(json.contains("\"wire\":\"iwarp\""), json);
            assertTrue(json.contains("\"terminate.layer\":\"1\""), json);
            assertTrue(json.contains("\"formattedMessage\":"), json);
            assertFalse(json.contains("\"arguments\""), json);
        }
    }

    @Test
    void aGuardClosingASilentSocketLogsWithTheConnectionsFields() throws Exception {
        ServerLimits d = ServerLimits.defaults();
        ServerLimits limits = new ServerLimits(d.maxStartups(), d.maxPerSource(), d.messageDeadlineMs(),
                d.maxReadSize(), d.sourcePrefixV4(), d.sourcePrefixV6(), d.maxStartupsPerSource(), 200,
                d.drainTimeoutSec(), d.allowMarkers(), d.tlsHandshakesPerSec());
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0)
                        .withLimits(limits), ServeOptions.on(IwarpStack.builder().threads(1).build()));
             Capture log = new Capture("dev.iwarp");
             java.net.Socket silent = new java.net.Socket("127.0.0.1", server.port())) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            ILoggingEvent line = null;
            while (line == null && System.nanoTime() < deadline) {
                line = log.events().stream().filter(e -> e.getFormattedMessage().contains("--first-octet-timeout"))
                        .findFirst().orElse(null);
                Thread.sleep(20);
            }
            assertNotNull(line, () -> "no first-octet-timeout line: " + lines(log));
            Map<String, String> mdc = line.getMDCPropertyMap();
            assertEquals("iwarp", mdc.get(ConnectionLogContext.WIRE), mdc::toString);
            assertEquals("127.0.0.1:" + silent.getLocalPort(), mdc.get(ConnectionLogContext.PEER), mdc::toString);
            assertEquals(8, String.valueOf(mdc.get(ConnectionLogContext.CONN)).length(), mdc::toString);
        }
    }

    @Test
    void logOptionsSwitchTheConsoleEncoderAndLevels() {
        LoggerContext context = (LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
        ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.classic.Logger ours = context.getLogger("dev.iwarp");
        Level rootBefore = root.getLevel();
        Level oursBefore = ours.getLevel();
        ch.qos.logback.core.ConsoleAppender<ILoggingEvent> console = new ch.qos.logback.core.ConsoleAppender<>();
        console.setContext(context);
        console.setName("json-test");
        ch.qos.logback.classic.encoder.PatternLayoutEncoder pattern = new ch.qos.logback.classic.encoder.PatternLayoutEncoder();
        pattern.setContext(context);
        pattern.setPattern("%msg%n");
        pattern.start();
        console.setEncoder(pattern);
        root.addAppender(console);
        try {
            LogOptions o = new LogOptions();
            o.format = "json";
            o.level = "debug";
            o.apply();
            assertTrue(console.getEncoder() instanceof JsonEncoder, String.valueOf(console.getEncoder()));
            assertEquals(Level.DEBUG, ours.getLevel());
            LogOptions bad = new LogOptions();
            bad.format = "xml";
            assertEquals("--log-format must be text or json: xml",
                    assertThrows(IllegalArgumentException.class, bad::apply).getMessage());
            LogOptions badLevel = new LogOptions();
            badLevel.level = "loud";
            assertThrows(IllegalArgumentException.class, badLevel::apply);
        } finally {
            root.detachAppender(console);
            root.setLevel(rootBefore);
            ours.setLevel(oursBefore);
            context.getLogger("dev.iwarp.mpa").setLevel(null);
        }
    }

    /**
     * Keeps every event with its MDC and arguments fixed on the thread that logged it (a ListAppender would
     * read the MDC only when asked, on the test's thread).
     */
    private static final class Capture extends ch.qos.logback.core.AppenderBase<ILoggingEvent> implements AutoCloseable {
        private final ch.qos.logback.classic.Logger logger;
        private final List<ILoggingEvent> events = new java.util.ArrayList<>();

        Capture(String name) {
            logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(name);
            setContext(logger.getLoggerContext());
            start();
            logger.addAppender(this);
        }

        @Override
        protected void append(ILoggingEvent e) {
            e.prepareForDeferredProcessing();
            events.add(e); // AppenderBase.doAppend holds this appender's lock
        }

        synchronized List<ILoggingEvent> events() {
            return List.copyOf(events);
        }

        @Override
        public void close() {
            logger.detachAppender(this);
            stop();
        }
    }

    private static String lines(Capture log) {
        List<String> l = log.events().stream().map(e -> e.getLoggerName() + " " + e.getFormattedMessage()
                + " " + e.getMDCPropertyMap()).collect(Collectors.toList());
        return String.join("\n", l);
    }

}
