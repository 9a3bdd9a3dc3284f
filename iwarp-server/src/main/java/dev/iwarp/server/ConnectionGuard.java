package dev.iwarp.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code serve}'s bounds on what peers may hold, the same for every wire (issue 14). A {@link Head} at the front of
 * each accepted connection's pipeline admits it or closes it at once (connections in startup, connections per source
 * address), and once the connection request arrived ({@link #started}) watches it: a message whose first octet
 * arrived must be complete within the message deadline, and a session that completes no message (a ULPDU handed up
 * by MPA or IFT, a VI/TCP segment; seen by a {@link Mark} right after the framing) for the idle timeout is closed.
 * Octets that do not complete a message are not activity, so a trickle of one octet per interval defeats neither.
 */
final class ConnectionGuard {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);

    private final ServerLimits limits;
    private final long idleNanos;
    private final long deadlineNanos;
    private final long tickMillis;
    private final AggregatedLog refusals;
    private final AtomicInteger startups = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> perSource = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();

    ConnectionGuard(ServerLimits limits, long idleTimeoutSec, AggregatedLog refusals) {
        this.limits = limits;
        this.idleNanos = TimeUnit.SECONDS.toNanos(idleTimeoutSec);
        this.deadlineNanos = TimeUnit.MILLISECONDS.toNanos(limits.messageDeadlineMs());
        long shortest = Math.min(idleNanos == 0 ? Long.MAX_VALUE : idleNanos,
                deadlineNanos == 0 ? Long.MAX_VALUE : deadlineNanos);
        // a check every quarter of the shortest limit: a limit is enforced at most 25 % late
        this.tickMillis = shortest == Long.MAX_VALUE ? 0
                : Math.max(10, Math.min(1000, TimeUnit.NANOSECONDS.toMillis(shortest) / 4));
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
            h.started();
            ch.pipeline().addAfter(messagesAfter, "guard-messages", new Mark(h));
        }
    }

    /** Connections closed at once by {@code --max-startups} or {@code --max-per-source}. */
    long refused() {
        return refused.get();
    }

    /** Connections now in startup. */
    int inStartup() {
        return startups.get();
    }

    /** Admits a new connection from {@code source}, or says why not. */
    private String admit(InetAddress source) {
        AtomicInteger n = perSource.computeIfAbsent(source, a -> new AtomicInteger());
        if (n.incrementAndGet() > limits.maxPerSource() && limits.maxPerSource() > 0) {
            leave(source);
            return "refused: more than " + limits.maxPerSource() + " connections from one address (--max-per-source)";
        }
        if (startups.incrementAndGet() > limits.maxStartups() && limits.maxStartups() > 0) {
            startups.decrementAndGet();
            leave(source);
            return "refused: " + limits.maxStartups() + " connections already in startup (--max-startups)";
        }
        return null;
    }

    private void leave(InetAddress source) {
        perSource.computeIfPresent(source, (a, n) -> n.decrementAndGet() == 0 ? null : n);
    }

    /** First in the pipeline: admission, the count of every read, and the timers. On the event loop. */
    final class Head extends ChannelInboundHandlerAdapter {
        private InetAddress source;
        private boolean counted;
        private boolean refusedHere;
        private boolean inStartup;
        private boolean started;
        private boolean partial;
        private long partialSince;
        private long lastMessage;
        private ScheduledFuture<?> tick;
        private ChannelHandlerContext ctx;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            this.ctx = ctx;
            source = ((InetSocketAddress) ctx.channel().remoteAddress()).getAddress();
            String refusal = admit(source);
            if (refusal != null) {
                refused.incrementAndGet();
                refusals.warn(source.getHostAddress(), refusal);
                refusedHere = true;
                ctx.close();
                return; // never reaches the framing
            }
            counted = true;
            inStartup = true;
            ctx.fireChannelActive();
        }

        void started() {
            if (inStartup) {
                inStartup = false;
                startups.decrementAndGet();
            }
            started = true;
            partial = false;
            lastMessage = System.nanoTime();
            if (tickMillis > 0 && tick == null && ctx != null) {
                tick = ctx.executor().scheduleAtFixedRate(this::check, tickMillis, tickMillis, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (started && !partial) {
                partial = true; // a message has begun; the Mark clears this when one completes
                partialSince = System.nanoTime();
            }
            ctx.fireChannelRead(msg);
        }

        void messageCompleted() {
            partial = false;
            lastMessage = System.nanoTime();
        }

        private void check() {
            long now = System.nanoTime();
            if (!ctx.channel().isOpen()) {
                return;
            }
            if (deadlineNanos > 0 && partial && now - partialSince > deadlineNanos) {
                LOG.info("{} a message begun {} ms ago is still incomplete (--message-deadline); closing", ctx.channel().remoteAddress(),
                        TimeUnit.NANOSECONDS.toMillis(now - partialSince));
                ctx.close();
            } else if (idleNanos > 0 && now - lastMessage > idleNanos) {
                LOG.info("{} no complete message for {} s (--idle-timeout); closing", ctx.channel().remoteAddress(),
                        TimeUnit.NANOSECONDS.toSeconds(now - lastMessage));
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (tick != null) {
                tick.cancel(false);
            }
            if (inStartup) {
                inStartup = false;
                startups.decrementAndGet();
            }
            if (counted) {
                counted = false;
                leave(source);
            }
            if (!refusedHere) { // the framing never saw it open: nothing for it to report
                super.channelInactive(ctx);
            }
        }
    }

    /** Right after the framing: every message it hands up is a complete one. */
    static final class Mark extends ChannelInboundHandlerAdapter {
        private final Head head;

        Mark(Head head) {
            this.head = head;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            head.messageCompleted();
            ctx.fireChannelRead(msg);
        }
    }
}
