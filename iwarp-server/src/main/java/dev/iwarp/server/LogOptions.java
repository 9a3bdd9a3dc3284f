package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

import java.util.Iterator;
import java.util.Locale;

/**
 * {@code --log-format text|json} and {@code --log-level}: applied to the Logback configuration of
 * {@code logback.xml} (its STDERR appender and levels) before the command logs anything.
 *
 * <p>JSON is Logback's own {@link JsonEncoder}: one object per line with the timestamp (ms since the
 * epoch), level, thread, logger, the formatted message, the MDC (each connection's {@code conn}, {@code
 * peer} and {@code wire}, see {@link ConnectionLogContext}; a Terminate's {@code terminate.*} fields) and
 * any throwable.
 */
public final class LogOptions {
    @Option(names = "--log-format", paramLabel = "FORMAT", description = "text (for people) or json (one object "
            + "per line, for log collectors) (default: ${DEFAULT-VALUE}).")
    String format = "text";

    @Option(names = "--log-level", paramLabel = "LEVEL", description = "error, warn, info, debug or trace: our "
            + "loggers' level; Netty's own stay at warn (default: ${DEFAULT-VALUE}).")
    String level = "info";

    /** Applies the options; an {@link IllegalArgumentException} names a bad value. */
    public void apply() {
        String f = format.toLowerCase(Locale.ROOT);
        if (!f.equals("text") && !f.equals("json")) {
            throw new IllegalArgumentException("--log-format must be text or json: " + format);
        }
        String l = level.toLowerCase(Locale.ROOT);
        if (!l.matches("error|warn|info|debug|trace")) {
            throw new IllegalArgumentException("--log-level must be error, warn, info, debug or trace: " + level);
        }
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return; // another SLF4J binding: its own configuration decides
        }
        Level lv = Level.toLevel(l);
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(lv);
        context.getLogger("dev.iwarp").setLevel(lv);
        if (!l.equals("info")) { // at info, logback.xml keeps the MPA codec's per-connection lines at warn
            context.getLogger("dev.iwarp.mpa").setLevel(lv);
        }
        if (f.equals("json")) {
            Iterator<Appender<ILoggingEvent>> it = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)
                    .iteratorForAppenders();
            while (it.hasNext()) {
                if (it.next() instanceof OutputStreamAppender<ILoggingEvent> out) {
                    out.setEncoder(jsonEncoder(context));
                }
            }
        }
    }

    static JsonEncoder jsonEncoder(LoggerContext context) {
        JsonEncoder json = new JsonEncoder();
        json.setContext(context);
        json.setWithSequenceNumber(false);
        json.setWithNanoseconds(false);
        json.setWithContext(false);
        json.setWithMessage(false); // the pattern with {} ...
        json.setWithArguments(false); // ... and its arguments: the formatted message says both
        json.setWithFormattedMessage(true);
        json.start();
        return json;
    }
}
