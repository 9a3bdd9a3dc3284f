package dev.iwarp.server;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.iwarp.bootstrap.IwarpStack;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A client tool prints its result once; the library's log lines only with --verbose. */
class ToolLoggingTest {

    private record Run(int code, String out, List<ILoggingEvent> log) {
    }

    private static Run run(String... args) {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        root.addAppender(events);
        try {
            StringWriter out = new StringWriter();
            int code = Main.run(args, new PrintWriter(out, true), new PrintWriter(new StringWriter(), true));
            return new Run(code, out.toString(), List.copyOf(events.list));
        } finally {
            root.detachAppender(events);
        }
    }

    private static boolean fromLibrary(ILoggingEvent e) {
        return java.util.Arrays.stream(ToolLogging.LIBRARY).anyMatch(p -> e.getLoggerName().startsWith(p + "."));
    }

    @Test
    void probePrintsThePeersTerminateOnceAndTheEngineStaysQuiet() throws Exception {
        try (RpingServer server = RpingServer.start(ServerConfig.defaults().withAddress("127.0.0.1", 0),
                ServeOptions.on(IwarpStack.builder().threads(1).build()))) {
            String at = "127.0.0.1:" + server.port();
            Run quiet = run("probe", at, "--case", "write-invalid-stag");
            assertEquals(0, quiet.code(), quiet.out());
            List<String> lines = quiet.out().lines().toList();
            assertEquals(4, lines.size(), quiet.out());
            assertEquals("result: AS-RFC: Terminate 1/1/0x00", lines.get(3));
            assertEquals(1, lines.stream().filter(l -> l.contains("invalid STag [raw")).count(), quiet.out());
            assertEquals(List.of(), quiet.log().stream().filter(ToolLoggingTest::fromLibrary)
                    .map(ILoggingEvent::getFormattedMessage).toList(), "no library log line without --verbose");

            Run verbose = run("probe", at, "--case", "write-invalid-stag", "--verbose");
            assertEquals(0, verbose.code(), verbose.out());
            assertTrue(verbose.log().stream().anyMatch(e -> e.getFormattedMessage().contains("terminated the stream")),
                    "--verbose shows the engine's line");
        }
    }
}
