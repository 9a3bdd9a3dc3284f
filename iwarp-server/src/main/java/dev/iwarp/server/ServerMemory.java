package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.verbs.MemoryBudget;
import io.netty.util.internal.PlatformDependent;

import java.util.Locale;

/**
 * {@code serve}'s memory arithmetic: the budget of memory committed on peers' behalf, what one connection can make
 * it commit at most, and the defaults that follow (--memory-budget, --max-connections, --read-rate).
 */
final class ServerMemory {
    /** Default --read-rate: 1 GiB/s of Read Responses per connection (an 8.6 Gbit/s line), 0 = no limit. */
    static final long DEFAULT_READ_RATE = 1L << 30;
    /** The session's receive and RDMA buffers: what an rping or ping needs (the new-session allowance). */
    static final long SESSION_BUFFERS = 2L * RpingSession.BUFFER_SIZE;
    /** The part of the budget kept for new sessions: 1/16. */
    static final int HEADROOM_DIVISOR = 16;

    private ServerMemory() {
    }

    /** The JVM's direct-memory limit as Netty sees it: -XX:MaxDirectMemorySize, or else the maximum heap (-Xmx). */
    static long maxDirectMemory() {
        return PlatformDependent.maxDirectMemory();
    }

    /** Default --memory-budget: 3/4 of the direct-memory limit; the rest for socket buffers, TLS and the stack. */
    static long defaultBudget(long maxDirectMemory) {
        return Math.max(1, maxDirectMemory / 4 * 3);
    }

    /**
     * The most one connection can make serve commit: its target region, the session's two 64 KiB buffers and the
     * receive buffer's twin while an echo is on its way ({@link EchoBuffers}), a bench client's receive ring (1 MiB at
     * most) and the Read Responses and FPDUs queued towards a peer that does not read (the write-buffer high-water
     * mark, 768 KiB; responses are cut into segments only as the socket takes them).
     */
    static long perConnection(int targetSize, boolean sharedTarget) {
        return (sharedTarget ? 0 : targetSize) + SESSION_BUFFERS + RpingSession.BUFFER_SIZE
                + BenchHello.MAX_RING_OCTETS + IwarpStack.DEFAULT_WRITE_BUFFER_WATER_MARK.high();
    }

    /**
     * Default --max-connections: as many sessions as the budget less its headroom gives their two session buffers,
     * at least 1. Not their worst case: what a session commits beyond those buffers (its target as it is touched, a
     * bench ring) is drawn from the budget and refused when it runs short, so sizing the connection count by the
     * worst case would only turn idle peers away (10,000 idle connections hold no buffer memory at all).
     */
    static int defaultMaxConnections(long budget) {
        long n = (budget - budget / HEADROOM_DIVISOR) / SESSION_BUFFERS;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, n));
    }

    /** The budget: {@code limit} octets, 1/16 kept for sessions that hold at most their two session buffers. */
    static MemoryBudget budget(long limit) {
        return MemoryBudget.of(limit, limit / HEADROOM_DIVISOR, SESSION_BUFFERS);
    }

    /** A size such as 4096, 64k, 512m or 4g (binary units). */
    static long parseSize(String option, String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        if (t.endsWith("k") || t.endsWith("m") || t.endsWith("g") || t.endsWith("t")) {
            unit = 1L << (10 * ("kmgt".indexOf(t.charAt(t.length() - 1)) + 1));
            t = t.substring(0, t.length() - 1);
        }
        try {
            long v = Long.parseLong(t);
            if (v <= 0 || v > Long.MAX_VALUE / unit) {
                throw new NumberFormatException();
            }
            return v * unit;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": '" + text + "' is not a size (e.g. 4096, 64k, 512m, 4g)");
        }
    }

    /** {@code n} octets in the largest binary unit that keeps one decimal, e.g. "4.4 GiB". */
    static String human(long n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
