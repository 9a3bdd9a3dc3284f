package dev.iwarp.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * Counts how often one logger is asked whether a level is enabled, on the thread that made it, for tests that
 * bound those checks (a level check per message asks every turbo filter of the logging backend each time):
 * {@code try (LevelChecks checks = LevelChecks.of(MpaFramer.class, Level.TRACE)) { ...; n = checks.count(); }}.
 * Logback asks turbo filters at every level check and at every log call below it; this one decides nothing.
 */
public final class LevelChecks extends TurboFilter implements AutoCloseable {
    private final Thread thread = Thread.currentThread();
    private final String loggerName;
    private final Level level;
    private final LoggerContext context;
    private int count;

    private LevelChecks(String loggerName, Level level) {
        this.loggerName = loggerName;
        this.level = level;
        context = (LoggerContext) LoggerFactory.getILoggerFactory();
        start();
        context.addTurboFilter(this);
    }

    /** Counts the checks of {@code level} on the logger named after {@code type}, from now until {@link #close}. */
    public static LevelChecks of(Class<?> type, Level level) {
        return new LevelChecks(type.getName(), level);
    }

    /** The checks counted so far. */
    public int count() {
        return count;
    }

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level l, String format, Object[] params, Throwable t) {
        if (Thread.currentThread() == thread && l == level && logger.getName().equals(loggerName)) {
            count++;
        }
        return FilterReply.NEUTRAL;
    }

    /** Stops counting. */
    @Override
    public void close() {
        context.getTurboFilterList().remove(this);
        stop();
    }
}
