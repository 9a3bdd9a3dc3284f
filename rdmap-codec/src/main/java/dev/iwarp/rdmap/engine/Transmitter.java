package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpOutboundMessage;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.LlpStream;
import dev.iwarp.rdmap.RdmapControl;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.verbs.RdmaObserver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The transmit side of one stream (as siw's qp_tx): DDP messages in the order RDMAP hands them over
 * (Sends, Writes and Requests of the send queue, Read and Atomic Responses), cut into segments only
 * while the channel is writable. A large Write or Read Response therefore never sits whole in the
 * outbound buffer: at most the write-buffer high-water mark plus one segment does, and transmission
 * resumes on {@code channelWritabilityChanged}. One message is finished before the next starts, so
 * two unfinished messages of one buffer model never interleave (Linux siw fails the stream then).
 *
 * <p>A message's promise completes with its last segment's write, or, when its writes released its
 * source (every payload octet copied on the way down), right after the write loop ({@link #transmit}).
 * A message goes back to its segmenter
 * once its last segment was written or it was dropped (no allocation per message). Each segment goes
 * to the lower layer's {@link dev.iwarp.ddp.llp.UlpduWriter}: its header octets cut into one reused
 * array, its payload a slice of the source; no segment object and no composite per segment. Confined
 * to the event loop.
 */
final class Transmitter implements MessageTransmitter {
    /**
     * A promise completed by its message's last write, even when the message's source was released earlier (a
     * copy): a Read or Atomic Response, whose IRD slot is held until the response left (RFC 5040 §5.2).
     */
    interface CompletesOnceSent {
    }

    /** No completion promise for a queued message. */
    private static final Object NO_PROMISE = new Object();
    /** Each queued message followed by its promise or {@link #NO_PROMISE}: no holder object per message. */
    private final ArrayDeque<Object> queue = new ArrayDeque<>(1); // grows as used: idle streams stay small
    private ChannelHandlerContext ctx;
    private LlpStream lowerLayer;
    /**
     * Promises of messages whose writes released their source (every payload octet copied on the way down):
     * completed by this transmitter once its write loop is done, not inside it, and not by the writes.
     */
    private final ArrayDeque<ChannelPromise> sourcesReleased = new ArrayDeque<>(1); // grows as used
    /**
     * The message whose segment the lower layer is taking: a write that fails at once reports it inside that call
     * (a void promise fires {@code exceptionCaught}), and the stream's end then discards the queue; this message
     * is given back by the write loop once the lower layer returned, not by the discard.
     */
    private DdpOutboundMessage writing;
    /** In {@link #transmit}: work posted from a completion it reports waits for its loop. */
    private boolean transmitting;
    /** When what is written is flushed: read batches, held requests, nested and deferred transmits. */
    private final FlushPolicy flushPolicy = new FlushPolicy(() -> ctx.flush());
    /** Reports the sources a {@link #transmitPosted} released, and writes what their listeners post. */
    private final Runnable reportLater = () -> {
        flushPolicy.reportRunning();
        transmit(true);
    };
    private boolean closeWhenDrained;
    /** DDP header octets of the segment being written (at most the 18 of an untagged header). */
    private final ByteBuf header = Unpooled.wrappedBuffer(new byte[DdpUntaggedSegment.HEADER_LENGTH]);
    private boolean closed;
    /** Read Response octets per second at most; 0: no limit. */
    private long readRate;
    /** Read Response octets that may go now (negative: owed by the segment that overdrew it). */
    private long readCredit;
    /** When {@link #readCredit} was last topped up (the event loop's ticker), once {@link #readCreditStarted}. */
    private long readCreditAt;
    private boolean readCreditStarted;
    /** A {@link #resumeReads} is scheduled: armed only while Read Responses wait for credit. */
    private boolean readsResumeScheduled;
    private final Runnable resumeReads = () -> {
        readsResumeScheduled = false;
        transmit(true);
    };
    /** Told of every message once its last segment goes to the lower layer. */
    RdmaObserver observer = RdmaObserver.NONE;

    /** This stream's flush rules, for the parts that read ULPDUs and post requests. */
    @Override
    public FlushPolicy flushPolicy() {
        return flushPolicy;
    }

    void attach(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Called once the lower layer is in full operation. */
    void start(LlpStream lowerLayer) {
        this.lowerLayer = lowerLayer;
    }

    /**
     * RDMA Read Responses leave at {@code octetsPerSecond} at most (0: no limit), with bursts of up to 10 ms of
     * that rate (at least 64 KiB): a 28-octet Read Request may ask for 2^32-1 octets (RFC 5040 §4.4), and what
     * one connection's peer makes us send per second is then a budget, not the peer's choice. A Read Response at
     * the head of the queue waits for credit, and what follows it waits with it (messages leave in order).
     */
    void readResponseRate(long octetsPerSecond) {
        readRate = octetsPerSecond;
        readCreditStarted = false;
    }

    long readResponseRate() {
        return readRate;
    }

    private long readBurst() {
        return Math.max(64 * 1024, readRate / 100);
    }

    private static boolean isReadResponse(DdpOutboundMessage m) {
        return m.isTagged() && RdmapControl.opcode(m.rsvdUlp()) == RdmapOpcode.RDMA_READ_RESPONSE.value();
    }

    /** Whether a Read Response segment may go now; if not, arms one task to resume when it may. */
    private boolean readCreditLeft() {
        if (readCredit > 0) {
            return true;
        }
        long now = ctx.executor().ticker().nanoTime();
        if (!readCreditStarted) {
            readCreditStarted = true;
            readCredit = readBurst();
        } else {
            double earned = Math.min(now - readCreditAt, TimeUnit.SECONDS.toNanos(1)) * (readRate / 1e9);
            readCredit = Math.min(readBurst(), readCredit + (long) earned);
        }
        readCreditAt = now;
        if (readCredit > 0) {
            return true;
        }
        if (!readsResumeScheduled) {
            readsResumeScheduled = true;
            // resume once a tenth of the burst is earned, not the first octet: a peer that reads faster than the
            // rate then costs at most 1,000 timers a second, not one per segment (30,000 a second at 1 GiB/s)
            long waitNs = (long) Math.ceil((readBurst() / 10 - readCredit) * (1e9 / readRate));
            ctx.executor().schedule(resumeReads, Math.max(1, waitNs), TimeUnit.NANOSECONDS);
        }
        return false;
    }

    /**
     * Queues a message; it goes out with the next {@link #transmit}. Takes ownership of {@code message}.
     *
     * @param done completed with the message's last segment, or {@code null}
     */
    @Override
    public void enqueue(DdpOutboundMessage message, ChannelPromise done) {
        if (closed) {
            message.discard();
            message.recycle();
            if (done != null) {
                done.tryFailure(new ClosedChannelException());
            }
            return;
        }
        queue.add(message);
        queue.add(done != null ? done : NO_PROMISE);
    }

    /** Payload octets of the queued messages not yet handed to the lower layer. For monitoring: walks the queue. */
    long queuedOctets() {
        long octets = 0;
        for (Object o : queue) {
            if (o instanceof DdpOutboundMessage) {
                octets += ((DdpOutboundMessage) o).remaining();
            }
        }
        return octets;
    }

    /** Messages queued or partly sent. */
    int queued() {
        return queue.size() / 2;
    }

    /**
     * Writes segments while the channel is writable, then flushes if {@code flush} and anything was
     * written (a caller inside a read batch leaves the flush to {@code channelReadComplete}). Starts
     * the graceful close once the queue ran empty, when one was asked for.
     *
     * <p>A Send or Write whose payload the layer below copied (MPA: a small FPDU built whole) completes
     * once its write was made, not once the socket took it: its source is free. Those completions are
     * reported after the write loop, and what their listeners post is written by the same call, which
     * goes on while the channel stays writable: small messages then fill the outbound buffer as far as its
     * high-water mark, as a raw Netty writer would, instead of one send-queue depth per {@code writev}
     * (16 messages per {@code writev} at depth 16 before).
     */
    @Override
    public void transmit(boolean flush) {
        transmit(flush, true);
    }

    /**
     * As {@link #transmit}, for {@code postSend}: the completions of sources released here are reported by a
     * task of the event loop, never inside the call (a listener that posts would otherwise see its post's
     * completion before the post returned). That task also flushes: what the listeners it calls post then
     * leaves in the same {@code writev}.
     */
    @Override
    public void transmitPosted(boolean flush) {
        transmit(flush, false);
    }

    private void transmit(boolean flush, boolean report) {
        if (transmitting) { // a completion this call reports posted more: the running loop writes it
            flushPolicy.askedWhileTransmitting(flush);
            return;
        }
        transmitting = true;
        boolean wrote = false;
        try {
            do {
                wrote |= writeWhileWritable();
            } while (report && reportSourcesReleased() && !closed);
        } finally {
            transmitting = false;
        }
        boolean flushNow = flushPolicy.afterWrites(wrote, flush);
        if (!sourcesReleased.isEmpty()) {
            if (flushPolicy.deferToReport(flushNow)) { // reportLater flushes
                ctx.executor().execute(reportLater);
            }
        } else if (flushNow) {
            flushPolicy.flushNow();
        }
        if (closeWhenDrained && queue.isEmpty() && !closed) {
            closed = true;
            ctx.flush();
            lowerLayer.closeAfterFlush();
        }
    }

    /** Writes segments while the channel is writable; whether any was written. */
    private boolean writeWhileWritable() {
        boolean wrote = false;
        DdpOutboundMessage m;
        while ((m = (DdpOutboundMessage) queue.peek()) != null && ctx.channel().isWritable()) {
            boolean rated = readRate > 0 && isReadResponse(m);
            if (rated && !readCreditLeft()) {
                break;
            }
            int remaining = m.remaining();
            boolean last = m.nextSegmentIsLast();
            if (last && observer != RdmaObserver.NONE) {
                observer.transferred(ctx.channel(), false, dev.iwarp.rdmap.RdmapOpcode.fromValue(m.rsvdUlp() & 0x0F),
                        m.length(), true);
            }
            ChannelPromise promise = ctx.voidPromise();
            ChannelPromise released = null;
            if (last) {
                queue.poll();
                Object done = queue.poll();
                if (done != NO_PROMISE) {
                    if (releasesSource(m) && !(done instanceof CompletesOnceSent)) {
                        released = (ChannelPromise) done; // completed here, not by the write
                    } else {
                        promise = (ChannelPromise) done;
                    }
                }
            }
            header.clear();
            ByteBuf payload = m.nextSegment(header);
            boolean copied;
            writing = m;
            try {
                copied = lowerLayer.writeUlpdu(header, payload, promise); // the payload's reference went with it
            } finally {
                writing = null;
            }
            if (copied) {
                m.payloadCopiedBelow();
            }
            if (rated) {
                readCredit -= remaining - (last ? 0 : m.remaining());
            }
            if (last) {
                if (released == null) {
                    // its promise went with the write
                } else if (m.sourceReleased()) {
                    sourcesReleased.add(released);
                } else { // the lower layer refused it after all: the channel closed under it
                    released.tryFailure(new ClosedChannelException());
                }
                m.recycle(); // written: nothing refers to the message any more
            } else if (m.isDone()) {
                // dropped while its segment was being written (a write that failed at once ended the stream, and
                // the stream's end discarded the queue): given back here, where nothing refers to it any more
                m.recycle();
            }
            wrote = true;
        }
        return wrote;
    }

    /**
     * Whether {@code m}'s last segment, about to be written, leaves its source free once written: the message
     * is one segment the lower layer copies ({@link LlpStream#copiesPayload}, which it confirms through
     * {@link DdpOutboundMessage#payloadCopiedBelow}), or each segment carries its own copy ({@link
     * DdpOutboundMessage#copyEachSegment}).
     */
    private boolean releasesSource(DdpOutboundMessage m) {
        if (m.segmentsProduced() == 0 && lowerLayer.copiesPayload(m.headerLength(), m.length())) {
            // the CRC covers the adapter's copy, the octets sent: a copy of our own first would be a second one
            m.copyEachSegment(null);
            return true;
        }
        return m.copiesEachSegment();
    }

    /** Completes the promises of the sources the writes just made released; whether there were any. */
    private boolean reportSourcesReleased() {
        ChannelPromise p = sourcesReleased.poll();
        if (p == null) {
            return false;
        }
        do {
            p.trySuccess();
        } while ((p = sourcesReleased.poll()) != null);
        return true;
    }

    /** Graceful close (RFC 5040 §6.2.1): what is queued goes out, then the lower layer closes. */
    void closeAfterQueued() {
        closeWhenDrained = true;
        transmit(true);
    }

    /**
     * Abortive end: drops every queued message (their promises fail with {@code why}), then sends
     * {@code last} (a Terminate, or nothing when {@code null}) regardless of writability and closes
     * after it.
     */
    void abort(DdpSegment last, String why) {
        closed = true;
        if (last != null) {
            header.clear();
            last.encodeHeader(header);
            lowerLayer.writeUlpdu(header, last.content(), ctx.voidPromise()); // the segment's reference goes down
        }
        ctx.flush();
        // dropped after the Terminate left: their failed promises run completion code, which may close
        discardQueued(why);
        if (lowerLayer != null) {
            lowerLayer.closeAfterFlush();
        } else {
            ctx.close();
        }
    }

    /** Drops every queued message, failing their promises with {@code why}. */
    void discardQueued(String why) {
        Object m;
        while ((m = queue.poll()) != null) {
            DdpOutboundMessage dropped = (DdpOutboundMessage) m;
            dropped.discard();
            if (dropped != writing) { // the one being written is given back by the write loop (see writing)
                dropped.recycle();
            }
            Object done = queue.poll();
            if (done != NO_PROMISE) {
                ((ChannelPromise) done).tryFailure(new IllegalStateException(why));
            }
        }
    }
}
