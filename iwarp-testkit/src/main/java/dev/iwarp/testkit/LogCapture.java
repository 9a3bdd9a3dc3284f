package dev.iwarp.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Captures what a logger (and its children) logs during a test, for tests that count log lines:
 * {@code try (LogCapture log = LogCapture.of("dev.iwarp")) { ...; assertEquals(1, log.count(Level.WARN, "refused")); }}.
 * Events still reach the usual appenders.
 */
public final class LogCapture implements AutoCloseable {
    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private LogCapture(Logger logger) {
        this.logger = logger;
        appender.setContext(logger.getLoggerContext());
        appender.start();
        logger.addAppender(appender);
    }

    /** Captures {@code loggerName} and every logger below it. */
    public static LogCapture of(String loggerName) {
        return new LogCapture((Logger) LoggerFactory.getLogger(loggerName));
    }

    /** Every event so far (a copy). */
    public List<ILoggingEvent> events() {
        synchronized (appender) { // AppenderBase.doAppend holds the appender's lock while it adds
            return List.copyOf(appender.list);
        }
    }

    /** Formatted messages of the events at {@code level} or above that match {@code filter}. */
    public List<String> lines(Level level, Predicate<String> filter) {
        return events().stream().filter(e -> e.getLevel().isGreaterOrEqual(level)).map(ILoggingEvent::getFormattedMessage)
                .filter(filter).collect(Collectors.toList());
    }

    /** Events at exactly {@code level} whose formatted message contains {@code text}. */
    public long count(Level level, String text) {
        return events().stream().filter(e -> e.getLevel() == level && e.getFormattedMessage().contains(text)).count();
    }

    /** Events at any level whose formatted message contains {@code text}. */
    public long count(String text) {
        return events().stream().filter(e -> e.getFormattedMessage().contains(text)).count();
    }

    /**
     * Waits up to 10 s for an event at exactly {@code level} whose formatted message contains {@code text}
     * (a line a connection's event loop logs after the test's own thread moved on) and returns that message.
     */
    public String await(Level level, String text) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < end) {
            for (ILoggingEvent e : events()) {
                if (e.getLevel() == level && e.getFormattedMessage().contains(text)) {
                    return e.getFormattedMessage();
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no " + level + " line containing '" + text + "'; logged: "
                + lines(Level.TRACE, l -> true));
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        appender.stop();
    }
}
