package dev.iwarp.server;

import io.netty.channel.EventLoop;
import org.HdrHistogram.Histogram;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench}'s latency histograms: one per event loop, shared by the connections that loop runs (only it
 * records into it), each sized once for every latency a run can see. A histogram that grows to the latencies it
 * has seen makes a new counts array (tens to hundreds of KiB) whenever one message takes longer than any before,
 * as a scheduling stall on a loaded machine does in the middle of a measured phase; a fixed range costs the same
 * memory up front, and one per event loop keeps it independent of the connection count.
 */
final class BenchLatency {
    /**
     * The longest latency recorded as itself: an hour, {@code --timeout}'s ceiling. A longer one (possible only
     * with several iterations in flight, each completing within the timeout of the one before) counts as an hour.
     */
    static final long MAX_NANOS = TimeUnit.HOURS.toNanos(1);

    private final Map<EventLoop, Histogram> perLoop;

    private BenchLatency(Map<EventLoop, Histogram> perLoop) {
        this.perLoop = perLoop;
    }

    /** Gives each connection the histogram of its event loop (264 KiB each: three significant digits up to an hour). */
    static BenchLatency assign(List<BenchConnection> connections) {
        Map<EventLoop, Histogram> perLoop = new IdentityHashMap<>();
        for (BenchConnection c : connections) {
            c.latency(perLoop.computeIfAbsent(c.connection().channel().eventLoop(), loop -> histogram()));
        }
        return new BenchLatency(perLoop);
    }

    /** A histogram of latencies from 1 ns to {@link #MAX_NANOS}, three significant digits, that never grows. */
    static Histogram histogram() {
        return new Histogram(1, MAX_NANOS, 3);
    }

    /** Records one latency; on the event loop that owns {@code h}. */
    static void record(Histogram h, long nanos) {
        h.recordValue(Math.min(Math.max(0, nanos), MAX_NANOS));
    }

    /**
     * Drops what {@code loop} recorded so far (the warm-up's latencies); on that loop, as the measured phase begins
     * there: only it records into its histogram.
     */
    void reset(EventLoop loop) {
        Histogram h = perLoop.get(loop);
        if (h != null) {
            h.reset();
        }
    }

    /**
     * All loops' latencies in one histogram; after the phase (each loop's last record happened before its
     * connections' phase futures completed).
     */
    Histogram merged() {
        Histogram all = histogram();
        perLoop.values().forEach(all::add);
        return all;
    }
}
