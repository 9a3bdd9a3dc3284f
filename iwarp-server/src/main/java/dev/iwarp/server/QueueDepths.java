package dev.iwarp.server;

import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.verbs.QueuePair;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Queue depths summed over {@code serve}'s connections, for gauges: send-queue requests posted and not completed,
 * IRD and ORD slots in use (RFC 5040 §5.2), payload octets the RDMA engines hold back from the lower layer, and
 * octets written to the channels that the sockets have not taken yet. Sampled when a gauge is read and the last
 * sample is older than {@link #MAX_AGE_NANOS}: one task per event loop reads its own connections' state there (it
 * is confined to the loop), so the traffic pays nothing per message. A loop that does not answer within
 * {@link #WAIT_MILLIS} is left out of that sample.
 */
final class QueueDepths {
    /** A scrape reads every gauge: they share one sample. */
    static final long MAX_AGE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    static final long WAIT_MILLIS = 1000;

    /** One sample's sums. */
    record Totals(long sendRequests, long ird, long ord, long engineOctets, long channelOctets) {
        static final Totals ZERO = new Totals(0, 0, 0, 0, 0);

        Totals plus(Totals o) {
            return new Totals(sendRequests + o.sendRequests, ird + o.ird, ord + o.ord, engineOctets + o.engineOctets,
                    channelOctets + o.channelOctets);
        }
    }

    private final Supplier<Collection<Channel>> channels;
    private Totals last = Totals.ZERO;
    private long sampledAt;
    private boolean sampled;

    /** {@code channels}: the connections to sum over (serve: its sessions' channels). */
    QueueDepths(Supplier<Collection<Channel>> channels) {
        this.channels = channels;
    }

    /** The sums, sampled now unless a sample is younger than {@link #MAX_AGE_NANOS}. */
    synchronized Totals totals() {
        long now = System.nanoTime();
        if (!sampled || now - sampledAt >= MAX_AGE_NANOS) {
            last = sample();
            sampledAt = System.nanoTime();
            sampled = true;
        }
        return last;
    }

    private Totals sample() {
        Map<EventLoop, List<Channel>> byLoop = new HashMap<>();
        for (Channel ch : channels.get()) {
            byLoop.computeIfAbsent(ch.eventLoop(), l -> new ArrayList<>()).add(ch);
        }
        Totals sum = Totals.ZERO;
        List<Future<Totals>> pending = new ArrayList<>(byLoop.size());
        for (Map.Entry<EventLoop, List<Channel>> e : byLoop.entrySet()) {
            if (e.getKey().inEventLoop()) {
                sum = sum.plus(onLoop(e.getValue()));
            } else {
                pending.add(e.getKey().submit(() -> onLoop(e.getValue())));
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        for (Future<Totals> f : pending) {
            long left = deadline - System.nanoTime();
            if (f.awaitUninterruptibly(Math.max(0, left), TimeUnit.NANOSECONDS) && f.isSuccess()) {
                sum = sum.plus(f.getNow());
            }
        }
        return sum;
    }

    /** On the channels' event loop: their engines' and outbound buffers' state. */
    private static Totals onLoop(List<Channel> channels) {
        long sendRequests = 0;
        long ird = 0;
        long ord = 0;
        long engine = 0;
        long channel = 0;
        for (Channel ch : channels) {
            RdmaEngine e = ch.pipeline().get(RdmaEngine.class);
            if (e != null) {
                QueuePair qp = e.queuePair();
                sendRequests += qp.sendRequestsPosted();
                ird += qp.irdInUse();
                ord += qp.ordInUse();
                engine += qp.queuedOctets();
            }
            ChannelOutboundBuffer out = ch.unsafe().outboundBuffer();
            if (out != null) {
                channel += out.totalPendingWriteBytes();
            }
        }
        return new Totals(sendRequests, ird, ord, engine, channel);
    }
}
