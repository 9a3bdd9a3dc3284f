package dev.iwarp.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Test logging is quiet: events are kept for the running test, asserted here, printed only for a failed test. */
class TestLogTest {
    @Test
    void theOnlyAppenderKeepsEventsAndNothingGoesToTheConsole() {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        List<Appender<?>> appenders = new ArrayList<>();
        for (Iterator<? extends Appender<?>> it = root.iteratorForAppenders(); it.hasNext(); ) {
            appenders.add(it.next());
        }
        assertEquals(1, appenders.size(), appenders.toString());
        assertTrue(appenders.get(0) instanceof TestLog);
        assertTrue(appenders.stream().noneMatch(a -> a instanceof ConsoleAppender));

        LoggerFactory.getLogger("dev.iwarp.example").warn("peer {} sent garbage", "10.0.0.1");
        LoggerFactory.getLogger("dev.iwarp.example").debug("not kept: below INFO");
        assertEquals(List.of("peer 10.0.0.1 sent garbage"), TestLog.messages(Level.WARN));
        assertTrue(TestLog.messages(Level.TRACE).stream().noneMatch(m -> m.startsWith("not kept")));
    }

    @Test
    void aFailedTestsLogIsPrintedAPassedTestsIsNot() {
        LoggerFactory.getLogger("dev.iwarp.example").warn("expected warning");
        assertEquals("", afterEach(Optional.empty()), "passed: nothing printed");
        String printed = afterEach(Optional.of(new AssertionError("boom")));
        assertTrue(printed.contains("--- log of a test ---"), printed);
        assertTrue(printed.contains("WARN  [main] example - expected warning"), printed);
    }

    private static String afterEach(Optional<Throwable> outcome) {
        ExtensionContext context = (ExtensionContext) Proxy.newProxyInstance(TestLogTest.class.getClassLoader(),
                new Class<?>[] {ExtensionContext.class},
                (proxy, method, args) -> method.getName().equals("getDisplayName") ? "a test"
                        : method.getName().equals("getExecutionException") ? outcome : null);
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            new LeakDetectionExtension().afterEach(context);
        } finally {
            System.setErr(err);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
