package dev.iwarp.server;

import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * {@code serve}'s bounds on what peers may hold, the same for every wire. A {@link GuardedConnection} at the front of each accepted
 * connection's pipeline admits it or closes it at once (connections in startup, in all and per source prefix; TLS
 * handshakes per second per source prefix), closes a socket that sends nothing ({@code --first-octet-timeout}) or
 * whose output stays unwritable ({@code --drain-timeout}), and once the connection request arrived ({@link #started})
 * watches it: a message whose first octet arrived must be complete within the message deadline (the framing says
 * whether it still holds octets after each read, so a partial message behind a complete one in the same read is seen),
 * and a session that moves no data for the idle timeout is closed. A message moves data when it carries payload
 * octets or asks for some (an RDMA Read Request of a non-zero size); a zero-length Write, an empty Send or a trickle
 * of octets that completes nothing does not.
 *
 * <p>Timers cost nothing while nothing is due: each connection has at most one one-shot timer on its event loop,
 * armed for the earliest pending deadline and re-armed only when it fires (activity only moves a timestamp) or when a
 * new deadline comes before it. An idle connection wakes its event loop once per idle timeout, never periodically.
 */
final class ConnectionGuard {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);
    /** Admissions between two sweeps of per-source entries kept only for their TLS handshake count. */
    private static final int SWEEP_INTERVAL = 1024;
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private final ServerLimits limits;
    final long idleNanos;
    final long deadlineNanos;
    final long firstOctetNanos;
    final long drainNanos;
    final long startupNanos;
    private final AggregatedLog refusals;
    private final AtomicInteger startups = new AtomicInteger();
    private final ConcurrentHashMap<SourcePrefix, Source> perSource = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    /** Connections refused or closed, per {@link RefusalCause} ordinal. */
    private final AtomicLongArray byCause = new AtomicLongArray(RefusalCause.values().length);
    private final AtomicInteger admissions = new AtomicInteger();
    private final AtomicLong timerRuns = new AtomicLong();

    /** One source prefix's counts; changed only inside the map's compute functions (under its lock). */
    private static final class Source {
        int connections;
        int startups;
        long handshakeSecond;
        int handshakes;

        /** Counts a handshake begun {@code now} if fewer than {@code perSecond} began in the current second. */
        boolean handshake(long now, int perSecond) {
            if (handshakes == 0 || now - handshakeSecond >= SECOND) {
                handshakeSecond = now;
                handshakes = 0;
            }
            if (handshakes >= perSecond) {
                return false;
            }
            handshakes++;
            return true;
        }

        boolean recentHandshakes(long now) {
            return handshakes > 0 && now - handshakeSecond < SECOND;
        }
    }

    ConnectionGuard(ServerLimits limits, long idleTimeoutSec, AggregatedLog refusals) {
        this(limits, idleTimeoutSec, 0, refusals);
    }

    /**
     * {@code startupTimeoutMs}: the framing's startup timeout (it closes the connection itself); a connection that
     * closes still in startup at least this long after TCP accepted it is counted as closed by it (0: never).
     */
    ConnectionGuard(ServerLimits limits, long idleTimeoutSec, long startupTimeoutMs, AggregatedLog refusals) {
        this.limits = limits;
        this.startupNanos = TimeUnit.MILLISECONDS.toNanos(startupTimeoutMs);
        this.idleNanos = TimeUnit.SECONDS.toNanos(idleTimeoutSec);
        this.deadlineNanos = TimeUnit.MILLISECONDS.toNanos(limits.messageDeadlineMs());
        this.firstOctetNanos = TimeUnit.MILLISECONDS.toNanos(limits.firstOctetTimeoutMs());
        this.drainNanos = TimeUnit.SECONDS.toNanos(limits.drainTimeoutSec());
        this.refusals = refusals;
    }

    /** For {@code ServerWire.listen}: every accepted TCP connection, before any framing handler. */
    void onAccept(Channel ch) {
        ch.pipeline().addFirst("guard", new GuardedConnection(this));
    }

    /**
     * The connection's request arrived and is being answered: it leaves startup; {@code messagesAfter} the framing,
     * which tells what it holds and which messages move data through {@code messages}.
     */
    void started(Channel ch, String messagesAfter, dev.iwarp.server.wire.FramedMessages messages) {
        GuardedConnection h = ch.pipeline().get(GuardedConnection.class);
        if (h != null) {
            h.started(messagesAfter, messages);
            ch.pipeline().addAfter(messagesAfter, "guard-messages", new GuardedConnection.Mark(h));
        }
    }

    /**
     * The session on {@code ch} counts the payload octets its peer moved through the RDMA core ({@code octetsMoved},
     * read on {@code ch}'s event loop): the idle timeout counts them as activity, since the core takes ULPDUs from
     * the framing directly and they never pass the guard's mark.
     */
    void countsPeerOctets(Channel ch, LongSupplier octetsMoved) {
        GuardedConnection h = ch.pipeline().get(GuardedConnection.class);
        if (h != null) {
            if (ch.eventLoop().inEventLoop()) {
                h.countsPeerOctets(octetsMoved);
            } else {
                ch.eventLoop().execute(() -> h.countsPeerOctets(octetsMoved));
            }
        }
    }

    /** Connections closed at once by an admission limit. */
    long refused() {
        return refused.get();
    }

    /** Connections refused at accept or closed by a timeout for {@code cause} ({@link RefusalCause#MAX_CONNECTIONS}
     * and {@link RefusalCause#MEMORY_BUDGET} are counted elsewhere: always 0 here). */
    long refused(RefusalCause cause) {
        return byCause.get(cause.ordinal());
    }

    /** Connections now in startup. */
    int inStartup() {
        return startups.get();
    }

    /** Guard timers that ran so far, on every connection (what idle connections cost). */
    long timerRuns() {
        return timerRuns.get();
    }

    SourcePrefix prefixOf(InetAddress address) {
        return SourcePrefix.of(address, limits.sourcePrefixV4(), limits.sourcePrefixV6());
    }

    /** Admits a new connection (in startup) from {@code source}, or says why not. */
    String admit(InetAddress source) {
        RefusalCause c = admit(prefixOf(source), false);
        return c == null ? null : refusal(c);
    }

    /** The line logged for a connection refused for {@code cause} at accept. */
    private String refusal(RefusalCause cause) {
        switch (cause) {
            case MAX_STARTUPS:
                return "refused: " + limits.maxStartups() + " connections already in startup (--max-startups)";
            case MAX_PER_SOURCE:
                return "refused: " + limits.maxPerSource() + " connections from one source prefix already "
                        + "(--max-per-source, --source-prefix-v4/-v6)";
            case MAX_STARTUPS_PER_SOURCE:
                return "refused: " + limits.maxStartupsPerSource() + " connections from one source prefix "
                        + "already in startup (--max-startups-per-source)";
            case TLS_HANDSHAKE_RATE:
                return "refused: " + limits.tlsHandshakesPerSec() + " TLS handshakes from one source prefix "
                        + "in the last second (--tls-handshake-rate)";
            default:
                throw new IllegalArgumentException("not an admission limit: " + cause);
        }
    }

    /**
     * As above; {@code tls}: the connection begins a TLS handshake, counted against the per-prefix rate. Returns
     * the limit that refuses it, or null.
     */
    RefusalCause admit(SourcePrefix prefix, boolean tls) {
        if (admissions.incrementAndGet() % SWEEP_INTERVAL == 0) {
            sweep();
        }
        if (!reserveStartup()) {
            return RefusalCause.MAX_STARTUPS;
        }
        RefusalCause[] refusal = new RefusalCause[1];
        long now = System.nanoTime();
        perSource.compute(prefix, (p, s) -> {
            Source c = s != null ? s : new Source();
            if (limits.maxPerSource() > 0 && c.connections >= limits.maxPerSource()) {
                refusal[0] = RefusalCause.MAX_PER_SOURCE;
            } else if (limits.maxStartupsPerSource() > 0 && c.startups >= limits.maxStartupsPerSource()) {
                refusal[0] = RefusalCause.MAX_STARTUPS_PER_SOURCE;
            } else if (tls && limits.tlsHandshakesPerSec() > 0 && !c.handshake(now, limits.tlsHandshakesPerSec())) {
                refusal[0] = RefusalCause.TLS_HANDSHAKE_RATE;
            } else {
                c.connections++;
                c.startups++;
            }
            return c.connections == 0 && !c.recentHandshakes(now) ? null : c;
        });
        if (refusal[0] != null) {
            startups.decrementAndGet();
        }
        return refusal[0];
    }

    private boolean reserveStartup() {
        for (;;) {
            int n = startups.get();
            if (limits.maxStartups() > 0 && n >= limits.maxStartups()) {
                return false;
            }
            if (startups.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** An admitted connection from {@code source} left startup. */
    void leftStartup(InetAddress source) {
        leftStartup(prefixOf(source));
    }

    void leftStartup(SourcePrefix prefix) {
        startups.decrementAndGet();
        perSource.computeIfPresent(prefix, (p, c) -> {
            c.startups--;
            return c;
        });
    }

    /** An admitted connection from {@code source} closed ({@link #leftStartup} first if it was still in startup). */
    void leave(InetAddress source) {
        leave(prefixOf(source));
    }

    void leave(SourcePrefix prefix) {
        long now = System.nanoTime();
        perSource.computeIfPresent(prefix, (p, c) -> --c.connections == 0 && !c.recentHandshakes(now) ? null : c);
    }

    /** Forgets prefixes that hold no connection and whose handshake second is over. */
    private void sweep() {
        long now = System.nanoTime();
        for (SourcePrefix p : perSource.keySet()) {
            perSource.computeIfPresent(p, (k, c) -> c.connections == 0 && !c.recentHandshakes(now) ? null : c);
        }
    }

    /** Source prefixes tracked now (each holds a connection or began a handshake within the last second). */
    int sourcesTracked() {
        return perSource.size();
    }

    static InetAddress addressOf(SocketAddress a) {
        return a instanceof InetSocketAddress ? ((InetSocketAddress) a).getAddress() : null;
    }


    /** A connection from {@code source} refused at accept for {@code cause}: counted and logged (aggregated). */
    void refusedAtAccept(InetAddress source, SourcePrefix prefix, RefusalCause cause) {
        refused.incrementAndGet();
        byCause.incrementAndGet(cause.ordinal());
        refusals.warn(source.getHostAddress() + " (" + prefix + ")", refusal(cause));
    }

    /** A connection closed by one of the guard's timers for {@code cause}, or found late in startup. */
    void closedFor(RefusalCause cause) {
        byCause.incrementAndGet(cause.ordinal());
    }

    /** One run of a connection's guard timer. */
    void timerRan() {
        timerRuns.incrementAndGet();
    }
}
