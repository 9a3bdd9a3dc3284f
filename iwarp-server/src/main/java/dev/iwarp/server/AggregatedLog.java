package dev.iwarp.server;

import org.slf4j.Logger;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Repeated failures as one line per cause per window (a peer cannot flood the log): the first occurrence of
 * a cause is logged at once; the others within the window are only counted, and one line with the count and the
 * last source follows when the window is over ({@link #flush}, or the next occurrence after it). Thread-safe.
 */
final class AggregatedLog {
    /** Default window: one line per cause per 10 s at most, plus the first. */
    static final long DEFAULT_WINDOW_SEC = 10;

    private final Logger log;
    private final long windowNanos;
    private final Map<String, Window> windows = new HashMap<>();

    private static final class Window {
        final long start;
        long suppressed;
        Object lastSource;

        Window(long start) {
            this.start = start;
        }
    }

    AggregatedLog(Logger log, long window, TimeUnit unit) {
        this.log = log;
        this.windowNanos = unit.toNanos(window);
    }

    /** {@code source} failed with {@code cause} (a fixed text, the aggregation key). */
    void warn(Object source, String cause) {
        long now = System.nanoTime();
        synchronized (windows) {
            Window w = windows.get(cause);
            if (w != null && now - w.start < windowNanos) {
                w.suppressed++;
                w.lastSource = source;
                return;
            }
            if (w != null) {
                summary(cause, w);
            }
            windows.put(cause, new Window(now));
        }
        log.warn("{} {}", source, cause);
    }

    /** Logs the count of every window that is over (call periodically, and once at the end with {@code all}). */
    void flush(boolean all) {
        long now = System.nanoTime();
        synchronized (windows) {
            for (Iterator<Map.Entry<String, Window>> it = windows.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Window> e = it.next();
                if (all || now - e.getValue().start >= windowNanos) {
                    summary(e.getKey(), e.getValue());
                    it.remove();
                }
            }
        }
    }

    private void summary(String cause, Window w) {
        if (w.suppressed > 0) {
            log.warn("{} more in {} s, the last from {}: {}", w.suppressed,
                    TimeUnit.NANOSECONDS.toSeconds(windowNanos), w.lastSource, cause);
        }
    }
}
