package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.MemoryRefusedException;
import dev.iwarp.ddp.RegionViews;
import dev.iwarp.ddp.TaggedBuffer;
import dev.iwarp.ddp.llp.Placement;
import dev.iwarp.ddp.llp.UlpduReceiver;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.RdmapException;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.ddp.llp.RtrMessage;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaObserver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The receive side of one stream (as siw's qp_rx), bound to the lower layer
 * ({@link dev.iwarp.ddp.llp.LlpStream#receiveWith}): for a tagged ULPDU it checks the DDP and RDMAP
 * headers and the STag, base and bounds (RFC 5041 §7.2) and names the region slice the framing places
 * the payload into, before any payload octet is placed; a Send that passes the untagged queue's checks
 * is placed the same way, into the posted receive; other untagged ULPDUs (Read and Atomic Requests,
 * Terminates, Immediate Data, refused Sends) and the RTR come back whole and are handled as messages. Every error the peer
 * causes ends in a Terminate ({@link StreamLifecycle}). Confined to the event loop.
 */
final class Receiver implements UlpduReceiver, Placement.Target {
    private final RdmapStream stream;
    /** Where the peer's errors and its Terminate end the stream. */
    private final StreamLifecycle lifecycle;
    private final QueuePair qp;
    private final Placement placement = new Placement();
    /** The region slices payloads are read into, reused: no slice object per segment. Taken at the first
     * payload: an idle stream holds none.
     */
    private RegionViews views;
    /** The untagged segment being received. */
    private final InboundUntagged untagged = new InboundUntagged();
    /**
     * The DDP header of the segment being placed, for a Terminate that quotes it (RFC 5040 §7.2): written out
     * only when a Terminate is built ({@link #quotedHeader}), from the fields below and, for a Send, from
     * {@link #untagged}; no copy of each header the framing hands over.
     */
    private final ByteBuf header = Unpooled.wrappedBuffer(new byte[DdpUntaggedSegment.HEADER_LENGTH]);
    /** The control octet and RsvdULP (RDMAP's control) octet of the segment being placed (RFC 5041 §4.2, §4.3). */
    private int headerControl;
    private int headerRsvdUlp;
    /** STag and TO of the tagged segment being placed (RFC 5041 §4.2). */
    private int headerStag;
    private long headerTo;
    /** The tagged segment being placed: its destination, opcode, L bit and length. */
    private TaggedBuffer target;
    private RdmapOpcode op;
    private boolean last;
    private int length;
    /** Placement of the tagged segment failed: the stream terminated, nothing more for it. */
    private boolean placeFailed;
    /**
     * The RDMAP opcode {@link #onUntaggedHeader} found valid for the untagged ULPDU it answered "deliver", for
     * {@link #onPayload} to use rather than decode it again; null when there is none (or it was invalid: then the
     * whole-message path decodes it again and names the error).
     */
    private RdmapOpcode deliveredOp;

    Receiver(RdmapStream stream, StreamLifecycle lifecycle, QueuePair qp) {
        this.stream = stream;
        this.lifecycle = lifecycle;
        this.qp = qp;
    }

    @Override
    public Placement onHeader(ByteBuf ulpdu, int headerLength, int payloadLength) {
        stream.tx().flushPolicy().readStarted();
        deliveredOp = null;
        if (!stream.isRts()) { // after a Terminate nothing more is processed (RFC 5040 §6.2.2)
            return placement.discard();
        }
        int at = ulpdu.readerIndex();
        int control = ulpdu.getUnsignedByte(at);
        if (stream.awaitingRtr()) {
            return placement.deliver(); // the RTR (RFC 6581) is read as one message
        }
        if ((control & DdpSegment.FLAG_TAGGED) == 0) {
            return onUntaggedHeader(ulpdu, at, control, payloadLength);
        }
        int stag = DdpTaggedSegment.stag(ulpdu, at);
        long to = DdpTaggedSegment.to(ulpdu, at);
        headerControl = control;
        headerRsvdUlp = ulpdu.getUnsignedByte(at + 1);
        headerStag = stag;
        headerTo = to;
        try {
            op = stream.messages().receiveTagged(control & DdpSegment.VERSION_MASK, headerRsvdUlp);
            last = (control & DdpSegment.FLAG_LAST) != 0;
            length = payloadLength;
            if (stream.observer() != RdmaObserver.NONE) {
                stream.observer().transferred(stream.ctx().channel(), true, op, payloadLength, last);
            }
            target = op == RdmapOpcode.RDMA_WRITE ? stream.responder().writeTarget(stag, to, last, payloadLength)
                    : stream.requester().readResponseTarget(stag, to, last, payloadLength);
            if (target == null) { // no payload to place
                placed();
                return placement.discard();
            }
            placeFailed = false;
            return placement.place(this, (int) (to - target.baseTo()));
        } catch (RuntimeException | OutOfMemoryError e) {
            // the Terminate quotes the whole segment: its DDP Segment Length counts the payload too (RFC 5040 §4.7),
            // so the ULPDU itself while the framing still holds it whole, else its header
            failed(e, ulpdu.readableBytes() >= headerLength + payloadLength ? ulpdu : quotedHeader(), null);
            return placement.discard();
        }
    }

    /**
     * An untagged ULPDU's header. A Send (any of its four opcodes) that passes every check (RDMAP version, opcode
     * and QN, then RFC 5041 §7.2's MSN, posted buffer, MO and length) is placed like a tagged payload, into the
     * posted receive, so that a framing reads it straight there. Everything else is delivered whole: Read and
     * Atomic Requests, Terminates, Immediate Data (8 octets), and a Send that fails a check, whose Terminate
     * the whole-message path names, quoting the segment, before any of its octets is placed.
     */
    private Placement onUntaggedHeader(ByteBuf ulpdu, int at, int control, int payloadLength) {
        RdmapOpcode sendOp;
        try {
            sendOp = stream.messages().receiveUntagged(control & DdpSegment.VERSION_MASK, ulpdu.getUnsignedByte(at + 1),
                    DdpUntaggedSegment.qn(ulpdu, at));
        } catch (RuntimeException e) {
            return placement.deliver();
        }
        if (sendOp.queueNumber() != RdmapOpcode.Queues.SEND || sendOp.singleSegment() // Immediate Data
                || !stream.responder().acceptsSend(untagged.header(ulpdu, at), payloadLength)) {
            deliveredOp = sendOp;
            return placement.deliver();
        }
        headerControl = control; // the rest of its header is in untagged (acceptsSend read it)
        headerRsvdUlp = untagged.rsvdUlp;
        op = sendOp;
        last = untagged.last;
        length = payloadLength;
        target = null;
        placeFailed = false;
        if (stream.observer() != RdmaObserver.NONE) {
            stream.observer().transferred(stream.ctx().channel(), true, op, payloadLength, last);
        }
        return placement.place(this, stream.responder().sendOffset());
    }

    /** The framing moves the payload: into the region, an on-demand one getting its memory now. */
    @Override
    public void placeAt(int offset, ByteBuf src, int srcIndex, int len) {
        try {
            if (target != null) {
                target.placeAt(offset, src, srcIndex, len);
            } else if (stream.isRts()) { // a Send: once the stream left RTS its receive is flushed, or will be
                stream.responder().placeSendAt(offset, src, srcIndex, len);
            }
        } catch (RuntimeException | OutOfMemoryError e) {
            placeFailed = true;
            failed(e, quotedHeader(), null);
        }
    }

    /** The region slice a framing reads the payload into; null (then {@link #placeAt}) for on-demand memory. */
    @Override
    public ByteBuf view(int offset, int length) {
        if (target != null) {
            return target.view(offset, length, views());
        }
        return stream.isRts() ? stream.responder().sendView(offset, length, views()) : null;
    }

    @Override
    public void onPlaced() {
        if (placeFailed) {
            placeFailed = false;
            return;
        }
        try {
            placed();
        } catch (RuntimeException | OutOfMemoryError e) {
            failed(e, quotedHeader(), null);
        }
    }

    private void placed() {
        target = null;
        if (op == RdmapOpcode.RDMA_WRITE) {
            stream.responder().writePlaced(length);
        } else if (op == RdmapOpcode.RDMA_READ_RESPONSE) {
            stream.requester().readResponsePlaced(last, length);
        } else if (stream.isRts()) { // a Send; once the stream left RTS its receive is flushed, or will be
            stream.responder().sendPlaced(untagged, op, length);
        }
    }

    @Override
    public void onPayload(ByteBuf ulpdu) {
        int at = ulpdu.readerIndex();
        try {
            if (stream.awaitingRtr()) { // once per stream: the RTR path takes a segment
                DdpSegment seg = DdpCodec.decode(ulpdu);
                try {
                    onRtr(seg, stream.messages().receive(seg));
                } finally {
                    seg.release();
                }
                return;
            }
            InboundUntagged u = untagged.read(ulpdu); // untagged: onHeader delivers tagged ones only for the RTR
            RdmapOpcode op = deliveredOp;
            if (op == null) { // its header failed the checks: decoded again, to throw the error they name
                op = stream.messages().receiveUntagged(ulpdu.getUnsignedByte(at) & DdpSegment.VERSION_MASK,
                        ulpdu.getUnsignedByte(at + 1), u.qn);
            }
            onUntagged(op, u);
        } catch (RuntimeException | OutOfMemoryError e) {
            failed(e, ulpdu.readerIndex(at), null);
        } finally {
            deliveredOp = null;
            untagged.clear();
            ulpdu.readerIndex(at);
        }
    }

    /**
     * The peer's error: a Terminate naming it (RFC 5040 §7), quoting the DDP header at {@code ulpdu}'s
     * reader index; anything else propagates.
     */
    private void failed(Throwable t, ByteBuf ulpdu, ReadRequestHeader readRequest) {
        if (t instanceof RdmapException) {
            RdmapException e = (RdmapException) t;
            terminate(e.terminateCause(), ulpdu, e.readRequest() != null ? e.readRequest() : readRequest,
                    e.getMessage());
        } else if (t instanceof MemoryRefusedException) {
            stream.observer().memoryRefused(stream.ctx().channel());
            // the memory budget refused what this peer's message needs: only this stream ends, as for exhausted
            // direct memory below (RFC 5040 §7.2 Local Catastrophic Error, no header quoted)
            terminate(TerminateCause.of(RdmapError.LOCAL_CATASTROPHIC), ulpdu, null,
                    "memory budget spent: " + t.getMessage());
        } else if (t instanceof OutOfMemoryError && isDirectMemory((OutOfMemoryError) t)) {
            // a region registered on demand found no memory (direct memory exhausted): this stream ends, the
            // others go on. RFC 5040 §7.2: Local Catastrophic Error, no header quoted
            terminate(TerminateCause.of(RdmapError.LOCAL_CATASTROPHIC), ulpdu, null,
                    "no memory to place its message into: " + t.getMessage());
        } else if (t instanceof RuntimeException) {
            throw (RuntimeException) t;
        } else {
            throw (Error) t; // the heap: nothing here can recover from it (serve then ends the process)
        }
    }

    /** The DDP header of the segment being placed, as it arrived: for a Terminate that quotes it. */
    private ByteBuf quotedHeader() {
        ByteBuf h = header.clear().writeByte(headerControl).writeByte(headerRsvdUlp);
        if ((headerControl & DdpSegment.FLAG_TAGGED) != 0) {
            return h.writeInt(headerStag).writeLong(headerTo); // RFC 5041 §4.2
        }
        return h.writeInt(untagged.rsvdUlp2).writeInt(untagged.qn).writeInt(untagged.msn).writeInt(untagged.mo); // §4.3
    }

    /** Whether {@code e} says direct memory ran out (Netty's own limit or the JDK's), not the heap. */
    private static boolean isDirectMemory(OutOfMemoryError e) {
        return e instanceof io.netty.util.internal.OutOfDirectMemoryError
                || String.valueOf(e.getMessage()).contains("direct buffer memory");
    }

    private void terminate(TerminateCause cause, ByteBuf ulpdu, ReadRequestHeader readRequest, String what) {
        DdpSegment offending = DdpCodec.decode(ulpdu);
        try {
            lifecycle.terminate(cause, offending, readRequest, what);
        } finally {
            offending.release();
        }
    }

    /** A tagged segment handled whole (the RTR's path): the same checks, then placement. */
    private void onTagged(RdmapOpcode op, int stag, long to, boolean last, ByteBuf payload) {
        int len = payload.readableBytes();
        if (stream.observer() != RdmaObserver.NONE) {
            stream.observer().transferred(stream.ctx().channel(), true, op, len, last);
        }
        if (op == RdmapOpcode.RDMA_WRITE) {
            TaggedBuffer tb = stream.responder().writeTarget(stag, to, last, len);
            if (tb != null) {
                tb.place(to, payload);
            }
            stream.responder().writePlaced(len);
        } else {
            TaggedBuffer tb = stream.requester().readResponseTarget(stag, to, last, len);
            if (tb != null) {
                tb.place(to, payload);
            }
            stream.requester().readResponsePlaced(last, len);
        }
    }

    private void onUntagged(RdmapOpcode op, InboundUntagged u) {
        if (stream.observer() != RdmaObserver.NONE) {
            stream.observer().transferred(stream.ctx().channel(), true, op, u.payload.readableBytes(), u.last);
        }
        switch (op) {
            case RDMA_READ_REQUEST:
                stream.responder().onReadRequest(u);
                break;
            case ATOMIC_REQUEST:
                stream.responder().onAtomicRequest(u);
                break;
            case ATOMIC_RESPONSE:
                stream.requester().onAtomicResponse(u);
                break;
            case TERMINATE:
                lifecycle.onPeerTerminate(u.payload);
                break;
            default: // the Send variants and Immediate Data
                stream.responder().onSend(u, op);
        }
    }

    /** RFC 6581: the Responder's first message from the Initiator is the RTR; it is consumed invisibly. */
    private void onRtr(DdpSegment seg, RdmapOpcode op) {
        stream.awaitingRtr(false);
        RtrMessage type = stream.parameters().rtr();
        boolean ok = (type == RtrMessage.WRITE && op == RdmapOpcode.RDMA_WRITE && seg.payloadLength() == 0)
                || (type == RtrMessage.READ && op == RdmapOpcode.RDMA_READ_REQUEST)
                || (type == RtrMessage.SEND && op == RdmapOpcode.SEND && seg.payloadLength() == 0);
        if (!ok) {
            RdmaEngine.LOG.warn("{} peer's first message is {} but the negotiated RTR is {}; processing it normally",
                    stream.ctx().channel(), op.rfcName(), type);
            stream.established().trySuccess(qp);
            if (seg.isTagged()) {
                DdpTaggedSegment t = (DdpTaggedSegment) seg;
                onTagged(op, t.stag(), t.to(), t.isLast(), t.payload());
            } else {
                onUntagged(op, untagged.of((DdpUntaggedSegment) seg));
            }
            return;
        }
        if (op == RdmapOpcode.RDMA_READ_REQUEST) {
            // answered with a zero-length Read Response
            stream.responder().onReadRequest(untagged.of((DdpUntaggedSegment) seg));
        } // a Send RTR needs nothing: the receive queue starts at MSN 2
        stream.established().trySuccess(qp);
        stream.requester().pump(false);
    }

    private RegionViews views() {
        RegionViews v = views;
        if (v == null) {
            views = v = new RegionViews();
        }
        return v;
    }
}
