package dev.iwarp.bootstrap.tls;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/** Collects what the TLS layer logs during a test. */
final class LogCapture implements AutoCloseable {
    private final Logger logger = (Logger) LoggerFactory.getLogger(TlsLayer.class);
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    LogCapture() {
        appender.start();
        logger.addAppender(appender);
    }

    List<String> lines() {
        synchronized (appender) { // AppenderBase.doAppend holds this lock while it adds
            return appender.list.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).collect(Collectors.toList());
        }
    }

    /** Waits up to 10 s for a line matching {@code p} and returns it. */
    String await(Predicate<String> p) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < end) {
            for (String l : lines()) {
                if (p.test(l)) {
                    return l;
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no such log line; logged: " + lines());
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
    }
}
