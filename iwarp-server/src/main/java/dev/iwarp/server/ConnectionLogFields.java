package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.netty.util.concurrent.FastThreadLocal;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * Puts the fields of the connection a thread is handling ({@link ConnectionLogContext}) into the MDC when a line is
 * about to be logged, not when the connection's events start: a busy connection's read batches then cost no map
 * entries (the MDC makes a new entry for each key put after a removal), and only the batches that log pay for
 * them. A Logback turbo filter, because Logback asks those before it makes a logging event (and with it the copy of
 * the MDC the event carries); asked first, so that no other filter's ACCEPT skips it. It never decides anything.
 */
final class ConnectionLogFields extends TurboFilter {
    /** The connection whose event a thread is handling, and whether its fields are in that thread's MDC. */
    static final class Slot {
        ConnectionLogContext current;
        boolean inMdc;
    }

    private static final FastThreadLocal<Slot> SLOT = new FastThreadLocal<>() {
        @Override
        protected Slot initialValue() {
            return new Slot();
        }
    };
    private static final ConnectionLogFields INSTANCE = new ConnectionLogFields();

    static {
        INSTANCE.setName("iwarp-connection-log-fields");
        INSTANCE.start();
    }

    private ConnectionLogFields() {
    }

    /** This thread's slot (made at its first use). */
    static Slot slot() {
        return SLOT.get();
    }

    /**
     * Installs the filter in SLF4J's Logback context unless it is there (a reconfiguration may have cleared the
     * list); once per connection, not per event. Without Logback the fields are not logged.
     */
    static void ensureInstalled() {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (factory instanceof LoggerContext context) {
            ensureInstalled(context);
        }
    }

    static void ensureInstalled(LoggerContext context) {
        INSTANCE.setContext(context); // for its status messages only
        TurboFilterChain.addFirstIfAbsent(context, INSTANCE);
    }

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params,
                              Throwable t) {
        // asked on every logging call, enabled or not (an isTraceEnabled() per FPDU): the level first
        if (level == null || !level.isGreaterOrEqual(logger.getEffectiveLevel())) {
            return FilterReply.NEUTRAL;
        }
        Slot s = SLOT.getIfExists();
        if (s != null && s.current != null && !s.inMdc) {
            s.current.putFields();
            s.inMdc = true;
        }
        return FilterReply.NEUTRAL;
    }
}
