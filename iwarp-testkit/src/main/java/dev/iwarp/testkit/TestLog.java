package dev.iwarp.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;

import java.io.PrintStream;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * The log of the test that is running (installed by {@link TestLogConfigurator}): every event is kept,
 * not printed; {@link LeakDetectionExtension} clears it before each test and prints it to stderr when
 * the test fails. Tests that provoke a warning on purpose assert it with {@link #messages(Level)}.
 */
public final class TestLog extends AppenderBase<ILoggingEvent> {
    static final String NAME = "iwarp-test-log";
    /** Lines kept per test; a test logging more keeps the first ones and a count of the rest. */
    private static final int MAX_LINES = 5_000;
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS")
            .withZone(ZoneId.systemDefault());
    private static final boolean ECHO = Boolean.getBoolean("iwarp.test.log.echo");

    private static final List<ILoggingEvent> EVENTS = new ArrayList<>();
    private static int dropped;

    @Override
    protected void append(ILoggingEvent event) {
        event.prepareForDeferredProcessing();
        synchronized (EVENTS) {
            if (EVENTS.size() < MAX_LINES) {
                EVENTS.add(event);
            } else {
                dropped++;
            }
        }
        if (ECHO) {
            System.err.println(format(event));
        }
    }

    /** Forgets what was logged so far (before each test). */
    public static void clear() {
        synchronized (EVENTS) {
            EVENTS.clear();
            dropped = 0;
        }
    }

    /** The formatted messages logged at {@code level} or above since the test started. */
    public static List<String> messages(Level level) {
        List<String> out = new ArrayList<>();
        synchronized (EVENTS) {
            for (ILoggingEvent e : EVENTS) {
                if (e.getLevel().isGreaterOrEqual(level)) {
                    out.add(e.getFormattedMessage());
                }
            }
        }
        return out;
    }

    /** Prints what was logged since the test started, one line per event (for a failed test). */
    public static void printTo(PrintStream out, String header) {
        List<ILoggingEvent> copy;
        int lost;
        synchronized (EVENTS) {
            copy = new ArrayList<>(EVENTS);
            lost = dropped;
        }
        if (copy.isEmpty()) {
            return;
        }
        out.println(header);
        for (ILoggingEvent e : copy) {
            out.println(format(e));
        }
        if (lost > 0) {
            out.println("(" + lost + " more events not kept)");
        }
    }

    private static String format(ILoggingEvent e) {
        StringBuilder b = new StringBuilder(TIME.format(Instant.ofEpochMilli(e.getTimeStamp()))).append(' ')
                .append(String.format("%-5s", e.getLevel())).append(" [").append(e.getThreadName()).append("] ")
                .append(e.getLoggerName().substring(e.getLoggerName().lastIndexOf('.') + 1)).append(" - ")
                .append(e.getFormattedMessage());
        for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
            b.append(System.lineSeparator()).append("  ").append(t.getClassName()).append(": ").append(t.getMessage());
        }
        return b.toString();
    }

    static boolean isAtLeast(ILoggingEvent e, Level level) {
        return e.getLevel().isGreaterOrEqual(level);
    }
}
