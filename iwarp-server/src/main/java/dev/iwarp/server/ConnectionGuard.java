package dev.iwarp.server;

import dev.iwarp.ift.IftFramer;
import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.vitcp.VitcpCodec;
import dev.iwarp.vitcp.ViSegment;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
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

/**
 * {@code serve}'s bounds on what peers may hold, the same for every wire. A {@link Head} at the front of each accepted
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
    private final long idleNanos;
    private final long deadlineNanos;
    private final long firstOctetNanos;
    private final long drainNanos;
    private final long startupNanos;
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
        ch.pipeline().addFirst("guard", new Head());
    }

    /** The connection's request arrived and is being answered: it leaves startup; {@code messagesAfter} the framing. */
    void started(Channel ch, String messagesAfter) {
        Head h = ch.pipeline().get(Head.class);
        if (h != null) {
            h.started(messagesAfter);
            ch.pipeline().addAfter(messagesAfter, "guard-messages", new Mark(h));
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
    private RefusalCause admit(SourcePrefix prefix, boolean tls) {
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

    private void leftStartup(SourcePrefix prefix) {
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

    private void leave(SourcePrefix prefix) {
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

    private static InetAddress addressOf(SocketAddress a) {
        return a instanceof InetSocketAddress ? ((InetSocketAddress) a).getAddress() : null;
    }

    /** First in the pipeline: admission, the first octet, writability, the framing's leftovers, and the timer. */
    final class Head extends ChannelInboundHandlerAdapter {
        private SourcePrefix prefix;
        private boolean counted;
        private boolean refusedHere;
        /** Closed by one of this guard's timers (counted under its cause). */
        private boolean closedHere;
        private boolean inStartup;
        private boolean started;
        private boolean firstOctetSeen;
        private long acceptedAt;
        private boolean partial;
        private long partialSince;
        private long lastActivity;
        private boolean movedData;
        private long unwritableSince = -1;
        private String framingName;
        private ChannelHandler framer;
        /** No framing handler that can say what it holds (messages arrive whole, as over SCTP). */
        private boolean noFramer;
        private ScheduledFuture<?> timer;
        private long timerDue;
        /** A limit was found expired once; it closes if still expired after one more pass of the event loop's I/O. */
        private boolean expiredOnce;
        private ChannelHandlerContext ctx;

        /** The event loop's clock (a test's EmbeddedChannel moves it by hand). */
        private long now() {
            return ctx.executor().ticker().nanoTime();
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            this.ctx = ctx;
            acceptedAt = now();
            InetAddress source = addressOf(ctx.channel().remoteAddress());
            if (source != null) {
                prefix = prefixOf(source);
                RefusalCause refusal = admit(prefix, ctx.pipeline().get(dev.iwarp.bootstrap.tls.TlsLayer.TLS) != null);
                if (refusal != null) {
                    refused.incrementAndGet();
                    byCause.incrementAndGet(refusal.ordinal());
                    refusals.warn(source.getHostAddress() + " (" + prefix + ")", refusal(refusal));
                    refusedHere = true;
                    ctx.close();
                    return; // never reaches the framing
                }
                counted = true;
                inStartup = true;
            }
            if (firstOctetNanos > 0) {
                arm(acceptedAt + firstOctetNanos);
            }
            ctx.fireChannelActive();
        }

        void started(String messagesAfter) {
            if (inStartup) {
                inStartup = false;
                leftStartup(prefix);
            }
            started = true;
            framingName = messagesAfter;
            partial = false;
            lastActivity = now();
            if (idleNanos > 0) {
                arm(lastActivity + idleNanos);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            firstOctetSeen = true;
            if (!started) {
                ctx.fireChannelRead(msg);
                return;
            }
            ChannelHandler f = noFramer ? null : framer();
            if (f == null && !partial) {
                partial = true; // a framing that cannot say what it holds: a message begun; the Mark clears this
                partialSince = now();
            }
            ctx.fireChannelRead(msg);
            long now = movedData || f != null ? now() : 0;
            if (movedData) {
                movedData = false;
                lastActivity = now;
            }
            if (f != null) {
                boolean holds = holdsIncomplete(f);
                if (holds && !partial) {
                    partialSince = now;
                    if (deadlineNanos > 0) {
                        arm(now + deadlineNanos);
                    }
                }
                partial = holds;
            } else if (partial && deadlineNanos > 0) {
                arm(partialSince + deadlineNanos);
            }
        }

        /** The framing handler once it is in place (MPA installs its framer when startup ends), else null. */
        private ChannelHandler framer() {
            if (framer == null) {
                ChannelHandler h = ctx.pipeline().get(framingName);
                ChannelHandler mpa = ctx.pipeline().get(MpaFramer.class);
                framer = mpa != null ? mpa : h instanceof IftFramer || h instanceof VitcpCodec ? h
                        : ctx.pipeline().get(IftFramer.class);
            }
            return framer;
        }

        private boolean holdsIncomplete(ChannelHandler f) {
            if (f instanceof MpaFramer) {
                return ((MpaFramer) f).holdsIncompleteFpdu();
            }
            if (f instanceof IftFramer) {
                return ((IftFramer) f).holdsIncompleteFrame();
            }
            return ((VitcpCodec) f).holdsIncompleteSegment();
        }

        void messageCompleted(boolean moves) {
            movedData |= moves;
            if (framer == null) {
                partial = false;
                noFramer = framer() == null;
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                unwritableSince = -1;
            } else if (unwritableSince < 0) {
                unwritableSince = now();
                if (drainNanos > 0) {
                    arm(unwritableSince + drainNanos);
                }
            }
            ctx.fireChannelWritabilityChanged();
        }

        /** Arms the one timer for {@code due} unless it already fires no later. */
        private void arm(long due) {
            if (timer != null) {
                if (timerDue <= due) {
                    return;
                }
                timer.cancel(false);
            }
            timerDue = due;
            timer = ctx.executor().schedule(this::onTimer, Math.max(0, due - now()), TimeUnit.NANOSECONDS);
        }

        private void onTimer() {
            timer = null;
            timerRuns.incrementAndGet();
            if (!ctx.channel().isOpen()) {
                return;
            }
            long now = now();
            SocketAddress peer = dev.iwarp.server.wire.Addresses.printable(ctx.channel().remoteAddress());
            if (!expiredOnce && expired(now)) {
                // The loop may have been busy past the due time with the peer's octets already in the socket: look
                // again after the next I/O pass (a task scheduled now runs only after it) before closing.
                expiredOnce = true;
                timerDue = now;
                timer = ctx.executor().schedule(this::onTimer, 0, TimeUnit.NANOSECONDS);
                return;
            }
            expiredOnce = false;
            RefusalCause cause;
            if (firstOctetNanos > 0 && !firstOctetSeen && now - acceptedAt >= firstOctetNanos) {
                cause = RefusalCause.FIRST_OCTET_TIMEOUT;
                LOG.info("{} sent nothing in {} ms (--first-octet-timeout); closing", peer,
                        TimeUnit.NANOSECONDS.toMillis(now - acceptedAt));
            } else if (drainNanos > 0 && unwritableSince >= 0 && now - unwritableSince >= drainNanos) {
                cause = RefusalCause.DRAIN_TIMEOUT;
                LOG.info("{} read nothing of what we sent for {} s (--drain-timeout); closing", peer,
                        TimeUnit.NANOSECONDS.toSeconds(now - unwritableSince));
            } else if (started && deadlineNanos > 0 && partial && now - partialSince >= deadlineNanos) {
                cause = RefusalCause.MESSAGE_DEADLINE;
                LOG.info("{} a message begun {} ms ago is still incomplete (--message-deadline); closing", peer,
                        TimeUnit.NANOSECONDS.toMillis(now - partialSince));
            } else if (started && idleNanos > 0 && now - lastActivity >= idleNanos) {
                cause = RefusalCause.IDLE_TIMEOUT;
                LOG.info("{} moved no data for {} s (--idle-timeout); closing", peer,
                        TimeUnit.NANOSECONDS.toSeconds(now - lastActivity));
            } else {
                long due = Long.MAX_VALUE;
                if (firstOctetNanos > 0 && !firstOctetSeen) {
                    due = acceptedAt + firstOctetNanos;
                }
                if (drainNanos > 0 && unwritableSince >= 0) {
                    due = Math.min(due, unwritableSince + drainNanos);
                }
                if (started && deadlineNanos > 0 && partial) {
                    due = Math.min(due, partialSince + deadlineNanos);
                }
                if (started && idleNanos > 0) {
                    due = Math.min(due, lastActivity + idleNanos);
                }
                if (due != Long.MAX_VALUE) {
                    arm(due);
                }
                return;
            }
            closedHere = true;
            byCause.incrementAndGet(cause.ordinal());
            ctx.close();
        }

        private boolean expired(long now) {
            return firstOctetNanos > 0 && !firstOctetSeen && now - acceptedAt >= firstOctetNanos
                    || drainNanos > 0 && unwritableSince >= 0 && now - unwritableSince >= drainNanos
                    || started && deadlineNanos > 0 && partial && now - partialSince >= deadlineNanos
                    || started && idleNanos > 0 && now - lastActivity >= idleNanos;
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
            if (inStartup) {
                inStartup = false;
                leftStartup(prefix);
                if (!closedHere && startupNanos > 0 && now() - acceptedAt >= startupNanos) {
                    // the framing's startup timer closed it (MPA's, the IFT adaption's or the VI/TCP Incoming
                    // timeout), or the peer gave up as late: the guard does not see which, only that it was late
                    byCause.incrementAndGet(RefusalCause.STARTUP_TIMEOUT.ordinal());
                }
            }
            if (counted) {
                counted = false;
                leave(prefix);
            }
            if (!refusedHere) { // the framing never saw it open: nothing for it to report
                super.channelInactive(ctx);
            }
        }
    }

    /** Right after the framing: every message it hands up is a complete one; says whether it moves data. */
    static final class Mark extends ChannelInboundHandlerAdapter {
        private final Head head;

        Mark(Head head) {
            this.head = head;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            head.messageCompleted(movesData(msg));
            ctx.fireChannelRead(msg);
        }
    }

    /** RDMAP opcode of an RDMA Read Request (RFC 5040 §4.3). */
    private static final int READ_REQUEST = 1;
    /** Octets of a tagged / untagged DDP header with the RDMAP control octet (RFC 5041 §4, RFC 5040 §4.1). */
    private static final int TAGGED_HEADER = 14;
    private static final int UNTAGGED_HEADER = 18;
    /** Offset of the RDMA Read Message Size in an untagged ULPDU carrying a Read Request (RFC 5040 §4.4). */
    private static final int READ_SIZE_OFFSET = UNTAGGED_HEADER + 12;

    /**
     * Whether a message moves data: a DDP segment (MPA, IFT) with payload octets beyond its headers or a Read Request
     * of a non-zero size; a VI/TCP segment with payload or an RDMA Read. Anything else (SCTP messages) counts.
     */
    static boolean movesData(Object msg) {
        if (msg instanceof ByteBuf b) {
            int at = b.readerIndex();
            int length = b.readableBytes();
            if (length < 2) {
                return false;
            }
            boolean tagged = (b.getByte(at) & 0x80) != 0;
            if (tagged) {
                return length > TAGGED_HEADER;
            }
            if ((b.getByte(at + 1) & 0x0F) == READ_REQUEST) {
                return length >= READ_SIZE_OFFSET + 4 && b.getInt(at + READ_SIZE_OFFSET) != 0;
            }
            return length > UNTAGGED_HEADER;
        }
        if (msg instanceof ViSegment s) {
            return s.content().isReadable() || s.type() == dev.iwarp.vitcp.ViSegmentType.RDMA_READ_REQUEST;
        }
        return true;
    }
}
