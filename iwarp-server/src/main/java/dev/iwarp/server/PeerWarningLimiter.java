package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.netty.channel.Channel;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Per-source rate limit of the WARNs a peer can cause (issue 14: a client sending malformed input must not flood the
 * log). A Logback turbo filter for {@code serve} (see its {@code logback.xml}): a WARN or ERROR of a {@code dev.iwarp}
 * logger whose arguments name the peer (its {@link Channel} or socket address, as every "peer ..." line of the
 * codecs does) passes only {@link #setPerSource perSource} times per source IP address per window; the rest are
 * counted and reported as one line per source when the window is over. Lines that name no peer are not touched.
 */
public final class PeerWarningLimiter extends TurboFilter {
    private static final org.slf4j.Logger SUMMARY = LoggerFactory.getLogger(PeerWarningLimiter.class);

    private int perSource = 5;
    private long windowSeconds = 10;
    private final Map<InetAddress, Window> windows = new ConcurrentHashMap<>();
    private ScheduledExecutorService flusher;

    private static final class Window {
        final long start = System.nanoTime();
        int passed;
        long suppressed;
    }

    /** WARNs passed per source per window (default 5). */
    public void setPerSource(int perSource) {
        this.perSource = perSource;
    }

    /** Window length in seconds (default 10). */
    public void setWindowSeconds(long windowSeconds) {
        this.windowSeconds = windowSeconds;
    }

    @Override
    public void start() {
        flusher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "peer-warning-limiter");
            t.setDaemon(true);
            return t;
        });
        flusher.scheduleAtFixedRate(() -> flush(false), 1, 1, TimeUnit.SECONDS);
        super.start();
    }

    @Override
    public void stop() {
        if (flusher != null) {
            flusher.shutdownNow();
        }
        flush(true);
        super.stop();
    }

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        if (!isStarted() || level == null || !level.isGreaterOrEqual(Level.WARN) || params == null
                || !logger.getName().startsWith("dev.iwarp") || logger.getName().equals(SUMMARY.getName())) {
            return FilterReply.NEUTRAL;
        }
        InetAddress source = source(params);
        if (source == null) {
            return FilterReply.NEUTRAL;
        }
        long windowNanos = TimeUnit.SECONDS.toNanos(windowSeconds);
        Window over = null;
        Window w;
        synchronized (windows) {
            w = windows.get(source);
            if (w == null || System.nanoTime() - w.start >= windowNanos) {
                over = w;
                w = new Window();
                windows.put(source, w);
            }
            if (w.passed < perSource) {
                w.passed++;
            } else {
                w.suppressed++;
                w = null;
            }
        }
        if (over != null) {
            summary(source, over);
        }
        return w == null ? FilterReply.DENY : FilterReply.NEUTRAL;
    }

    /** Reports and forgets the windows that are over ({@code all}: every window). */
    void flush(boolean all) {
        long windowNanos = TimeUnit.SECONDS.toNanos(windowSeconds);
        long now = System.nanoTime();
        synchronized (windows) {
            for (Iterator<Map.Entry<InetAddress, Window>> it = windows.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<InetAddress, Window> e = it.next();
                if (all || now - e.getValue().start >= windowNanos) {
                    it.remove();
                    summary(e.getKey(), e.getValue());
                }
            }
        }
    }

    private void summary(InetAddress source, Window w) {
        if (w.suppressed > 0) {
            SUMMARY.warn("{} more warnings about peer {} in {} s not logged (at most {} per {} s per address)",
                    w.suppressed, source.getHostAddress(), windowSeconds, perSource, windowSeconds);
        }
    }

    private static InetAddress source(Object[] params) {
        for (Object p : params) {
            SocketAddress a = p instanceof Channel ? ((Channel) p).remoteAddress() : p instanceof SocketAddress
                    ? (SocketAddress) p : null;
            if (a instanceof InetSocketAddress && ((InetSocketAddress) a).getAddress() != null) {
                return ((InetSocketAddress) a).getAddress();
            }
            if (p instanceof InetAddress) {
                return (InetAddress) p;
            }
        }
        return null;
    }
}
