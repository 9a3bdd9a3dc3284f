package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.netty.channel.Channel;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The log lines peers can cause, bounded (a client must not be able to flood the log). A Logback turbo filter for
 * {@code serve} (see its {@code logback.xml}) over the {@code dev.iwarp} loggers' lines whose arguments name a peer (its
 * {@link Channel} or socket address, as every "peer ..." line of the codecs does):
 * <ul>
 *   <li>a WARN or ERROR passes only {@link #setPerSource perSource} times per source prefix (a /24 or /64 by
 *       default: a host holding a prefix can use all of its addresses) per window, and only
 *       {@link #setGlobalPerWindow globalPerWindow} times per window for all peers together; the rest are counted
 *       and reported as one line per prefix, plus one for all the others, when the window is over;</li>
 *   <li>an INFO line (a connection event: connected, closed, timed out) passes {@link #setEventsPerWindow
 *       eventsPerWindow} times per window; beyond that rate they are counted in one line per window.</li>
 * </ul>
 * Lines that name no peer are not touched. At most {@link #MAX_PREFIXES} prefixes are tracked per window: peers beyond
 * them count toward the global line, so the filter's memory is bounded too.
 */
public final class PeerWarningLimiter extends TurboFilter {
    /** Default cap on WARNs naming any peer per window, all prefixes together. */
    public static final int DEFAULT_GLOBAL_PER_WINDOW = 100;
    /** Default connection events (INFO lines naming a peer) logged per window: 20 a second on average. */
    public static final int DEFAULT_EVENTS_PER_WINDOW = 200;
    /** Source prefixes with their own count per window, at most. */
    static final int MAX_PREFIXES = 4096;

    private static final org.slf4j.Logger SUMMARY = LoggerFactory.getLogger(PeerWarningLimiter.class);

    private int perSource = 5;
    private long windowSeconds = 10;
    private int globalPerWindow = DEFAULT_GLOBAL_PER_WINDOW;
    private int eventsPerWindow = DEFAULT_EVENTS_PER_WINDOW;
    private volatile int prefixV4 = ServerLimits.DEFAULT_SOURCE_PREFIX_V4;
    private volatile int prefixV6 = ServerLimits.DEFAULT_SOURCE_PREFIX_V6;
    private final Map<SourcePrefix, Window> windows = new HashMap<>();
    private Window all;
    private Window events;
    private ScheduledExecutorService flusher;

    private static final class Window {
        final long start = System.nanoTime();
        int passed;
        long suppressed;
    }

    /** WARNs passed per source prefix per window (default 5). */
    public void setPerSource(int perSource) {
        this.perSource = perSource;
    }

    /** Window length in seconds (default 10). */
    public void setWindowSeconds(long windowSeconds) {
        this.windowSeconds = windowSeconds;
    }

    /** WARNs naming a peer passed per window for all peers together (default 100). */
    public void setGlobalPerWindow(int globalPerWindow) {
        this.globalPerWindow = globalPerWindow;
    }

    /** Connection events (INFO lines naming a peer) passed per window (default 200). */
    public void setEventsPerWindow(int eventsPerWindow) {
        this.eventsPerWindow = eventsPerWindow;
    }

    /** Bits of an IPv4 / IPv6 address that name its source (default 24 / 64). */
    public void setPrefixes(int v4Bits, int v6Bits) {
        this.prefixV4 = v4Bits;
        this.prefixV6 = v6Bits;
    }

    /** Sets the source prefixes of every limiter installed in the logging context (serve's --source-prefix-v4/-v6). */
    public static void usePrefixes(int v4Bits, int v6Bits) {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            for (TurboFilter f : TurboFilterChain.filtersOf(context)) {
                if (f instanceof PeerWarningLimiter limiter) {
                    limiter.setPrefixes(v4Bits, v6Bits);
                }
            }
        }
    }

    @Override
    public void start() {
        flusher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "peer-warning-limiter");
            t.setDaemon(true);
            return t;
        });
        flusher.scheduleAtFixedRate(() -> flush(false), 1, 1, TimeUnit.SECONDS); // one task for the whole process
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
        if (!isStarted() || level == null || params == null || !level.isGreaterOrEqual(Level.INFO)
                || !logger.getName().startsWith("dev.iwarp") || logger.getName().equals(SUMMARY.getName())) {
            return FilterReply.NEUTRAL;
        }
        InetAddress source = source(params);
        if (source == null) {
            return FilterReply.NEUTRAL;
        }
        return level.isGreaterOrEqual(Level.WARN) ? warning(source) : event();
    }

    private FilterReply event() {
        long windowNanos = TimeUnit.SECONDS.toNanos(windowSeconds);
        Window over = null;
        boolean pass;
        synchronized (windows) {
            if (events == null || System.nanoTime() - events.start >= windowNanos) {
                over = events;
                events = new Window();
            }
            pass = events.passed < eventsPerWindow;
            if (pass) {
                events.passed++;
            } else {
                events.suppressed++;
            }
        }
        eventSummary(over);
        return pass ? FilterReply.NEUTRAL : FilterReply.DENY;
    }

    private FilterReply warning(InetAddress source) {
        SourcePrefix prefix = SourcePrefix.of(source, prefixV4, prefixV6);
        long windowNanos = TimeUnit.SECONDS.toNanos(windowSeconds);
        Window overHere = null;
        Window overAll = null;
        boolean pass = false;
        synchronized (windows) {
            long now = System.nanoTime();
            if (all == null || now - all.start >= windowNanos) {
                overAll = all;
                all = new Window();
            }
            Window w = windows.get(prefix);
            if (w != null && now - w.start >= windowNanos) {
                windows.remove(prefix);
                overHere = w;
                w = null;
            }
            if (w == null && windows.size() < MAX_PREFIXES && all.passed < globalPerWindow) {
                w = new Window();
                windows.put(prefix, w);
            }
            if (w == null) {
                all.suppressed++; // over the global cap, or too many prefixes to count each
            } else if (w.passed >= perSource) {
                w.suppressed++;
            } else if (all.passed >= globalPerWindow) {
                all.suppressed++;
            } else {
                w.passed++;
                all.passed++;
                pass = true;
            }
        }
        if (overHere != null) {
            summary(prefix, overHere);
        }
        globalSummary(overAll);
        return pass ? FilterReply.NEUTRAL : FilterReply.DENY;
    }

    /** Reports and forgets the windows that are over ({@code all}: every window). */
    void flush(boolean everything) {
        long windowNanos = TimeUnit.SECONDS.toNanos(windowSeconds);
        long now = System.nanoTime();
        Window overAll = null;
        Window overEvents = null;
        synchronized (windows) {
            for (Iterator<Map.Entry<SourcePrefix, Window>> it = windows.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<SourcePrefix, Window> e = it.next();
                if (everything || now - e.getValue().start >= windowNanos) {
                    it.remove();
                    summary(e.getKey(), e.getValue());
                }
            }
            if (all != null && (everything || now - all.start >= windowNanos)) {
                overAll = all;
                all = null;
            }
            if (events != null && (everything || now - events.start >= windowNanos)) {
                overEvents = events;
                events = null;
            }
        }
        globalSummary(overAll);
        eventSummary(overEvents);
    }

    private void summary(SourcePrefix prefix, Window w) {
        if (w.suppressed > 0) {
            SUMMARY.warn("{} more warnings about peers in {} in {} s not logged (at most {} per {} s per source prefix)",
                    w.suppressed, prefix, windowSeconds, perSource, windowSeconds);
        }
    }

    private void globalSummary(Window w) {
        if (w != null && w.suppressed > 0) {
            SUMMARY.warn("{} more warnings about peers in {} s not logged (at most {} per {} s for all peers)",
                    w.suppressed, windowSeconds, globalPerWindow, windowSeconds);
        }
    }

    private void eventSummary(Window w) {
        if (w != null && w.suppressed > 0) {
            SUMMARY.info("{} more connection events in {} s not logged (at most {} per {} s)", w.suppressed,
                    windowSeconds, eventsPerWindow, windowSeconds);
        }
    }

    private static InetAddress source(Object[] params) {
        for (Object p : params) {
            SocketAddress a = p instanceof Channel ? ((Channel) p).remoteAddress() : p instanceof SocketAddress
                    ? dev.iwarp.server.wire.Addresses.unwrap((SocketAddress) p) : null;
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
