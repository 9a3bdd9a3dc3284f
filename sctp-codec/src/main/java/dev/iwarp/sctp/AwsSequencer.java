package dev.iwarp.sctp;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases {@link PlacementChunk}s in AWS order (draft §2.2 defines
 * AWS but not the release rule; this one is ours, see the module README): the expected AWS is the
 * cumulative AWS + 1 (the first is 1, mod 2^32, RFC 1982 comparisons); a chunk ahead of it waits in a
 * bounded reorder buffer (default 4096 messages or 8 MiB); one at or behind the cumulative AWS
 * (duplicate), one whose slot is taken, or one beyond the window is C9: one log line, abort, nothing
 * more delivered. This restores exactly the order DDP and RDMAP have over TCP, and signals are never
 * released before the cumulative AWS reaches their chunk (draft §2.2). Chunks without an AWS (the DDP
 * family) pass through.
 */
public class AwsSequencer extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(AwsSequencer.class);

    private final int windowMessages;
    private final int windowBytes;
    private final PlacementChunk[] ring;
    /** Ring index of the expected AWS. */
    private int head;
    private long expected;
    private int heldMessages;
    private long heldBytes;
    private boolean failed;

    public AwsSequencer(SctpSettings settings) {
        this(settings.reorderMessages(), settings.reorderBytes());
    }

    public AwsSequencer(int windowMessages, int windowBytes) {
        this(windowMessages, windowBytes, 0);
    }

    /** A sequencer whose cumulative AWS is already {@code cumulativeAws} (tests of the wrap at 2^32). */
    AwsSequencer(int windowMessages, int windowBytes, long cumulativeAws) {
        if (windowMessages < 1 || windowBytes < 1) {
            throw new IllegalArgumentException("reorder window must be positive: " + windowMessages + ", " + windowBytes);
        }
        this.expected = (cumulativeAws + 1) & 0xFFFFFFFFL;
        this.windowMessages = windowMessages;
        this.windowBytes = windowBytes;
        this.ring = new PlacementChunk[windowMessages];
    }

    /** Cumulative AWS: every chunk up to it was released (0: none yet). */
    public long cumulativeAws() {
        return (expected - 1) & 0xFFFFFFFFL;
    }

    /** Chunks waiting for a gap to close. */
    public int heldMessages() {
        return heldMessages;
    }

    public long heldBytes() {
        return heldBytes;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof PlacementChunk) || ((PlacementChunk) msg).aws() == PlacementChunk.NO_AWS) {
            ctx.fireChannelRead(msg);
            return;
        }
        PlacementChunk c = (PlacementChunk) msg;
        if (failed) {
            c.release();
            return;
        }
        long distance = (c.aws() - expected) & 0xFFFFFFFFL;
        if (distance >= 0x80000000L) { // RFC 1982: before the expected one
            fail(ctx, c, "AWS " + c.aws() + " at or behind the cumulative AWS " + cumulativeAws());
        } else if (distance >= windowMessages) {
            fail(ctx, c, "AWS " + c.aws() + " is " + distance + " beyond the expected " + expected + " (window "
                    + windowMessages + ")");
        } else if (distance == 0) {
            release(ctx, c);
            while (ring[head] != null) {
                PlacementChunk next = ring[head];
                ring[head] = null;
                heldMessages--;
                heldBytes -= next.content().readableBytes();
                release(ctx, next);
            }
        } else {
            int slot = (int) ((head + distance) % windowMessages);
            if (ring[slot] != null) {
                fail(ctx, c, "AWS " + c.aws() + " received twice");
            } else if (heldBytes + c.content().readableBytes() > windowBytes) {
                fail(ctx, c, "AWS " + c.aws() + " would hold " + (heldBytes + c.content().readableBytes())
                        + " octets waiting for AWS " + expected + " (window " + windowBytes + " octets)");
            } else {
                ring[slot] = c;
                heldMessages++;
                heldBytes += c.content().readableBytes();
            }
        }
    }

    private void release(ChannelHandlerContext ctx, PlacementChunk c) {
        expected = (expected + 1) & 0xFFFFFFFFL;
        head = (head + 1) % windowMessages;
        ctx.fireChannelRead(c);
    }

    private void fail(ChannelHandlerContext ctx, PlacementChunk c, String what) {
        c.release();
        failed = true;
        releaseHeld();
        SctpShimException e = new SctpShimException(SctpShimError.C9, what);
        LOG.warn("{}: {}; aborting the association", ctx.channel(), e.getMessage());
        SctpAbort.abort(ctx.channel());
        ctx.fireExceptionCaught(e);
    }

    private void releaseHeld() {
        for (int i = 0; i < ring.length; i++) {
            if (ring[i] != null) {
                ReferenceCountUtil.release(ring[i]);
                ring[i] = null;
            }
        }
        heldMessages = 0;
        heldBytes = 0;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        releaseHeld();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseHeld();
    }
}
