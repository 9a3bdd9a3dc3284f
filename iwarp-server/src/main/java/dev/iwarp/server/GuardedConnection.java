package dev.iwarp.server;

import dev.iwarp.server.wire.FramedMessages;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * One accepted connection under {@link ConnectionGuard}: first in its pipeline, it admits the connection or closes it
 * at once, watches the first octet, writability and what the framing still holds, and keeps the connection's one
 * one-shot timer armed for the earliest pending deadline (first octet, drain, message deadline, idle timeout).
 */
final class GuardedConnection extends ChannelInboundHandlerAdapter {
    /** The guard's own logger: its lines keep one name whichever class writes them. */
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);

    private final ConnectionGuard guard;

    private SourcePrefix prefix;
    private boolean counted;
    private boolean refusedHere;
    /** Closed by one of this guard's timers (counted under its cause). */
    private boolean closedHere;
    private boolean inStartup;
    private boolean started;
    private boolean firstOctetSeen;
    private long acceptedAt;
    private boolean acceptedAtTaken;
    private boolean partial;
    private long partialSince;
    /** A whole message passed the framing during the current read: what it still holds began in this read. */
    private boolean completedInRead;
    /**
     * The framing's count of messages it completed, where it hands them to the RDMA core directly (none passes
     * {@link Mark}); null where every message passes the mark or the framing cannot count.
     */
    private LongSupplier completedByFraming;
    private long completedSeen;
    private long lastActivity;
    private boolean movedData;
    /**
     * The session's count of payload octets the peer moved through the RDMA core, where the core takes ULPDUs from
     * the framing directly (none passes {@link Mark}); read only when the idle timeout looks expired. Null until the
     * session starts.
     */
    private LongSupplier peerOctetsMoved;
    private long peerOctetsSeen;
    private long unwritableSince = -1;
    /** The framing's word on its messages, once started. */
    private FramedMessages messages;
    /** Whether the framing holds part of a message, once a handler that can say is in place. */
    private BooleanSupplier framer;
    /** No framing handler that can say what it holds (messages arrive whole, as over SCTP). */
    private boolean noFramer;
    private ScheduledFuture<?> timer;
    private long timerDue;
    /** A limit was found expired once; it closes if still expired after one more pass of the event loop's I/O. */
    private boolean expiredOnce;
    private ChannelHandlerContext ctx;

    GuardedConnection(ConnectionGuard guard) {
        this.guard = guard;
    }

    /** The event loop's clock (a test's EmbeddedChannel moves it by hand). */
    private long now() {
        return ctx.executor().ticker().nanoTime();
    }

    /**
     * An accepted connection is active already when its pipeline is built: the framing added behind this handler may
     * arm its startup timer right away (MPA does, in its handlerAdded), before {@link #channelActive} runs. The accept
     * time is taken here, first, so that a framing timer always fires at least its timeout after it.
     */
    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            acceptedAt = now();
            acceptedAtTaken = true;
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (!acceptedAtTaken) {
            acceptedAt = now();
            acceptedAtTaken = true;
        }
        InetAddress source = ConnectionGuard.addressOf(ctx.channel().remoteAddress());
        if (source != null) {
            prefix = guard.prefixOf(source);
            RefusalCause refusal = guard.admit(prefix, ctx.pipeline().get(dev.iwarp.bootstrap.tls.TlsLayer.TLS) != null);
            if (refusal != null) {
                guard.refusedAtAccept(source, prefix, refusal);
                refusedHere = true;
                ctx.close();
                return; // never reaches the framing
            }
            counted = true;
            inStartup = true;
        }
        if (guard.firstOctetNanos > 0) {
            arm(acceptedAt + guard.firstOctetNanos);
        }
        ctx.fireChannelActive();
    }

    void started(String messagesAfter, FramedMessages messages) {
        if (inStartup) {
            inStartup = false;
            guard.leftStartup(prefix);
        }
        started = true;
        this.messages = messages;
        partial = false;
        lastActivity = now();
        if (guard.idleNanos > 0) {
            arm(lastActivity + guard.idleNanos);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        firstOctetSeen = true;
        if (!started) {
            ctx.fireChannelRead(msg);
            return;
        }
        BooleanSupplier f = noFramer ? null : framer();
        if (f == null && !partial) {
            partial = true; // a framing that cannot say what it holds: a message begun; the Mark clears this
            partialSince = now();
        }
        completedInRead = false;
        ctx.fireChannelRead(msg);
        LongSupplier completed = completedByFraming;
        if (completed != null) {
            long n = completed.getAsLong();
            if (n != completedSeen) {
                completedSeen = n;
                completedInRead = true;
            }
        }
        long now = movedData || f != null ? now() : 0;
        if (movedData) {
            movedData = false;
            lastActivity = now;
        }
        if (f != null) {
            boolean holds = f.getAsBoolean();
            // the deadline runs from the first octet of the message held now: if a message completed in this read,
            // the one held is a later one, begun in this read (a peer streaming faster than we read may never stop
            // between messages, each read ending inside one; each of them still arrived within the deadline)
            if (holds && (!partial || completedInRead)) {
                partialSince = now;
                if (guard.deadlineNanos > 0) {
                    arm(now + guard.deadlineNanos);
                }
            }
            partial = holds;
        } else if (partial && guard.deadlineNanos > 0) {
            arm(partialSince + guard.deadlineNanos);
        }
    }

    /** The framing handler once it is in place (MPA installs its framer when startup ends), else null. */
    private BooleanSupplier framer() {
        if (framer == null) {
            framer = messages.partialMessage(ctx.pipeline());
            if (framer != null) {
                completedByFraming = messages.messagesCompleted(ctx.pipeline());
                completedSeen = completedByFraming == null ? 0 : completedByFraming.getAsLong();
            }
        }
        return framer;
    }

    void messageCompleted(boolean moves) {
        movedData |= moves;
        completedInRead = true;
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
            if (guard.drainNanos > 0) {
                arm(unwritableSince + guard.drainNanos);
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

    /** A timer runs outside the pipeline, so its log lines get the connection's MDC here, as the session's do. */
    private void onTimer() {
        ConnectionLogContext.run(ctx.channel(), this::checkLimits);
    }

    private void checkLimits() {
        timer = null;
        guard.timerRan();
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
        if (guard.firstOctetNanos > 0 && !firstOctetSeen && now - acceptedAt >= guard.firstOctetNanos) {
            cause = RefusalCause.FIRST_OCTET_TIMEOUT;
            LOG.info("{} sent nothing in {} ms (--first-octet-timeout); closing", peer,
                    TimeUnit.NANOSECONDS.toMillis(now - acceptedAt));
        } else if (guard.drainNanos > 0 && unwritableSince >= 0 && now - unwritableSince >= guard.drainNanos) {
            cause = RefusalCause.DRAIN_TIMEOUT;
            LOG.info("{} read nothing of what we sent for {} s (--drain-timeout); closing", peer,
                    TimeUnit.NANOSECONDS.toSeconds(now - unwritableSince));
        } else if (started && guard.deadlineNanos > 0 && partial && now - partialSince >= guard.deadlineNanos) {
            cause = RefusalCause.MESSAGE_DEADLINE;
            LOG.info("{} a message begun {} ms ago is still incomplete (--message-deadline); closing", peer,
                    TimeUnit.NANOSECONDS.toMillis(now - partialSince));
        } else if (idleExpired(now)) {
            cause = RefusalCause.IDLE_TIMEOUT;
            LOG.info("{} moved no data for {} s (--idle-timeout); closing", peer,
                    TimeUnit.NANOSECONDS.toSeconds(now - lastActivity));
        } else {
            long due = Long.MAX_VALUE;
            if (guard.firstOctetNanos > 0 && !firstOctetSeen) {
                due = acceptedAt + guard.firstOctetNanos;
            }
            if (guard.drainNanos > 0 && unwritableSince >= 0) {
                due = Math.min(due, unwritableSince + guard.drainNanos);
            }
            if (started && guard.deadlineNanos > 0 && partial) {
                due = Math.min(due, partialSince + guard.deadlineNanos);
            }
            if (started && guard.idleNanos > 0) {
                due = Math.min(due, lastActivity + guard.idleNanos);
            }
            if (due != Long.MAX_VALUE) {
                arm(due);
            }
            return;
        }
        closedHere = true;
        guard.closedFor(cause);
        ctx.close();
    }

    private boolean expired(long now) {
        return guard.firstOctetNanos > 0 && !firstOctetSeen && now - acceptedAt >= guard.firstOctetNanos
                || guard.drainNanos > 0 && unwritableSince >= 0 && now - unwritableSince >= guard.drainNanos
                || started && guard.deadlineNanos > 0 && partial && now - partialSince >= guard.deadlineNanos
                || idleExpired(now);
    }

    /**
     * Whether the idle timeout ran out: no data moved for that long, neither in a message that passed {@link Mark}
     * nor in the RDMA core (payload octets the peer's Writes placed, its Reads took or its Sends brought since the
     * last look). Data the core moved since then counts as activity now: a busy connection is never idle.
     */
    private boolean idleExpired(long now) {
        if (!started || guard.idleNanos <= 0 || now - lastActivity < guard.idleNanos) {
            return false;
        }
        LongSupplier moved = peerOctetsMoved;
        if (moved != null) {
            long octets = moved.getAsLong();
            if (octets != peerOctetsSeen) {
                peerOctetsSeen = octets;
                lastActivity = now;
                return false;
            }
        }
        return true;
    }

    /** The session's count of payload octets the peer moved through the RDMA core (see {@link #idleExpired}). */
    void countsPeerOctets(LongSupplier octetsMoved) {
        peerOctetsMoved = octetsMoved;
        peerOctetsSeen = octetsMoved.getAsLong();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        if (inStartup) {
            inStartup = false;
            guard.leftStartup(prefix);
            if (!closedHere && guard.startupNanos > 0 && now() - acceptedAt >= guard.startupNanos) {
                // the framing's startup timer closed it (MPA's, the IFT adaption's or the VI/TCP Incoming
                // timeout), or the peer gave up as late: the guard does not see which, only that it was late
                guard.closedFor(RefusalCause.STARTUP_TIMEOUT);
            }
        }
        if (counted) {
            counted = false;
            guard.leave(prefix);
        }
        if (!refusedHere) { // the framing never saw it open: nothing for it to report
            super.channelInactive(ctx);
        }
    }

    /** Right after the framing: every message it hands up is a complete one; says whether it moves data. */
    static final class Mark extends ChannelInboundHandlerAdapter {
        private final GuardedConnection head;

        Mark(GuardedConnection head) {
            this.head = head;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            head.messageCompleted(head.messages.movesData(msg));
            ctx.fireChannelRead(msg);
        }
    }
}
