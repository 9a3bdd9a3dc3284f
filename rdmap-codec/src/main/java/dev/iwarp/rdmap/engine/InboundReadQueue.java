package dev.iwarp.rdmap.engine;

import dev.iwarp.rdmap.engine.internal.WritePromise;
import dev.iwarp.ddp.AccessFlags;
import dev.iwarp.ddp.DdpError;
import dev.iwarp.ddp.DdpOutboundMessage;
import dev.iwarp.ddp.FreeList;
import dev.iwarp.ddp.RegionViews;
import dev.iwarp.ddp.TaggedAccessResult;
import dev.iwarp.ddp.TaggedBuffer;
import dev.iwarp.ddp.TaggedBufferTable;
import dev.iwarp.ddp.UntaggedSlotQueue;
import dev.iwarp.rdmap.AtomicRequestHeader;
import dev.iwarp.rdmap.AtomicResponseHeader;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.RdmapException;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.PeerActivity;
import dev.iwarp.verbs.ProtectionDomain;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelPromise;

/**
 * The RDMA Read and Atomic responder of one stream (siw's inbound read queue, IRQ): each Read or Atomic Request
 * takes an IRD slot (QN 1, RFC 5040 §5.2, RFC 7306), its source is validated before anything is sent, and its
 * response is queued behind everything queued before it, in request order; the slot frees once the response
 * left. Part of the {@link Responder}. Every check that fails throws {@link RdmapException} with the Terminate to
 * send. Confined to the event loop.
 */
final class InboundReadQueue {
    /** Response promises kept for reuse at most. */
    private static final int SPARE_RESPONSE_PROMISES = 64;
    private final RdmapStream stream;
    /** Where responses are written and flushed. */
    private final MessageTransmitter tx;
    /** The tagged buffers (STags) Read Requests and atomics address (RFC 5041 §4). */
    private final TaggedBufferTable table;
    /** The protection domain the sources must belong to. */
    private final ProtectionDomain pd;
    /** QN 1: Read and Atomic Requests, one IRD slot each until the response is written; null before RTS. */
    private UntaggedSlotQueue slots;
    private int ird;
    /** Promises of responses whose write was reported, for the next responses. */
    private final FreeList<ResponseWritten> sparePromises = new FreeList<>(SPARE_RESPONSE_PROMISES);
    /**
     * The slices of registered memory Read Responses are sent from, reused: no slice object per response.
     * Taken at the first payload: an idle stream holds none.
     */
    private RegionViews sources;
    /** Where the per-segment copies of Read Responses come from (CRC on); made at the first. */
    private ByteBufAllocator responseCopies;
    /** What the peer did to us ({@link PeerActivity}); event loop only. */
    private long readsAnswered;
    private long readOctetsAnswered;

    InboundReadQueue(RdmapStream stream, MessageTransmitter tx, TaggedBufferTable table, ProtectionDomain pd) {
        this.stream = stream;
        this.tx = tx;
        this.table = table;
        this.pd = pd;
    }

    /** RTS: IRD from the lower layer. */
    void start(int ird) {
        this.ird = ird;
        slots = new UntaggedSlotQueue(RdmapOpcode.Queues.READ_REQUEST, ird);
    }

    /** Read and Atomic Requests holding an IRD slot until their response left (RFC 5040 §5.2). For monitoring. */
    int irdInUse() {
        UntaggedSlotQueue w = slots;
        return w == null ? 0 : ird - w.credits();
    }

    long readsAnswered() {
        return readsAnswered;
    }

    long readOctetsAnswered() {
        return readOctetsAnswered;
    }

    /** Takes an IRD slot for a Read or Atomic Request (RFC 5040 §5.2, RFC 7306). */
    private void accept(InboundUntagged u, RdmapOpcode op, int headerLength) {
        if (u.payloadLength() != headerLength || !u.last) {
            throw new RdmapException(RdmapError.CATASTROPHIC_STREAM, op.rfcName() + " with " + u.payloadLength()
                    + " octets of RDMAP header");
        }
        DdpError e = slots.accept(u.qn, u.msn, u.mo);
        if (e == DdpError.INVALID_MSN_NO_BUFFER) {
            // beyond IRD: siw sends RDMAP / Remote Operation / 0x07 (RFC 5040 §5.2)
            throw new RdmapException(RdmapError.CATASTROPHIC_STREAM, op.rfcName() + " beyond IRD " + ird);
        }
        if (e != null) {
            throw new RdmapException(TerminateCause.of(e), op.rfcName() + " MSN " + Integer.toUnsignedLong(u.msn)
                    + ": " + e.description());
        }
    }

    /**
     * An RDMA Read Request (RFC 5040 §4.4): the source is validated, the response queued. The header is
     * read field by field; a {@link ReadRequestHeader} is made only to quote it in a Terminate.
     */
    void onReadRequest(InboundUntagged u) {
        accept(u, RdmapOpcode.RDMA_READ_REQUEST, ReadRequestHeader.LENGTH);
        ByteBuf in = u.payload;
        int at = in.readerIndex();
        int sinkStag = in.getInt(at);
        long sinkTo = in.getLong(at + 4);
        long size = in.getUnsignedInt(at + 12);
        int sourceStag = in.getInt(at + 16);
        long sourceTo = in.getLong(at + 20);
        int max = pd.device().maxReadSize();
        if (max > 0 && size > max) {
            // a resource this responder will not commit, like a Request beyond IRD: RFC 5040 §7.2 Remote
            // Operation Error 0x07, "catastrophic error, localized to RDMAP Stream", before any STag check so
            // the answer says nothing about the source
            throw new RdmapException(TerminateCause.of(RdmapError.CATASTROPHIC_STREAM),
                    ReadRequestHeader.decode(in, at), "Read Request of " + size + " octets, more than the " + max
                    + " served per request");
        }
        if (size == 0) {
            respondRead(sinkStag, sinkTo, Unpooled.EMPTY_BUFFER); // zero-length: no validation (RFC 6581 Read RTR)
            return;
        }
        TaggedAccessResult r = table.check(sourceStag, pd, sourceTo, size, AccessFlags.REMOTE_READ);
        if (r != TaggedAccessResult.OK) {
            throw new RdmapException(TerminateCause.of(protectionError(r)), ReadRequestHeader.decode(in, at),
                    "Read Request of " + size + " octets from " + Responder.hex(sourceStag) + "@0x"
                    + Long.toHexString(sourceTo) + ": " + r);
        }
        respondRead(sinkStag, sinkTo, table.lookup(sourceStag).read(sourceTo, (int) size, sources()));
    }

    private void respondRead(int sinkStag, long sinkTo, ByteBuf data) {
        readsAnswered++;
        readOctetsAnswered += data.readableBytes();
        DdpOutboundMessage response = stream.messages().readResponse(sinkStag, sinkTo, data);
        if (stream.parameters().digestsPayload()) {
            // the source may be written (by any peer) while the response is out: the lower layer's CRC
            // must cover exactly the octets sent, so each segment carries its own copy, charged to this peer's
            // memory budget while it is queued (ChargedCopies)
            if (responseCopies == null) {
                responseCopies = ChargedCopies.of(pd.memoryAccount(), stream, stream.ctx().executor(), stream.ctx().alloc());
            }
            response.copyEachSegment(responseCopies);
        }
        tx.enqueue(response, releasesSlot());
        tx.transmit(false);
    }

    /** An RFC 7306 Atomic Request: performed on the 8-aligned target, the original value returned. */
    void onAtomicRequest(InboundUntagged u) {
        accept(u, RdmapOpcode.ATOMIC_REQUEST, AtomicRequestHeader.LENGTH);
        AtomicRequestHeader h = AtomicRequestHeader.decode(u.payload, u.payload.readerIndex());
        if (h.operation() == null) {
            throw new RdmapException(RdmapError.UNEXPECTED_OPCODE, "unsupported AtomOp");
        }
        TaggedAccessResult r = table.check(h.remoteStag(), pd, h.remoteTo(), 8, AccessFlags.REMOTE_ATOMIC);
        if (r == TaggedAccessResult.OK && (h.remoteTo() & 7) != 0) {
            r = TaggedAccessResult.BASE_OR_BOUNDS; // the 64-bit target must be naturally aligned (RFC 7306)
        }
        if (r != TaggedAccessResult.OK) {
            throw new RdmapException(TerminateCause.of(protectionError(r)), "Atomic " + h.operation() + " on "
                    + Responder.hex(h.remoteStag()) + "@0x" + Long.toHexString(h.remoteTo()) + ": " + r);
        }
        TaggedBuffer tb = table.lookup(h.remoteStag());
        long original;
        synchronized (tb) { // atomic with respect to other atomics on this region, from any connection
            ByteBuf target = tb.read(h.remoteTo(), 8);
            try {
                original = target.getLong(target.readerIndex());
                long updated = h.apply(original); // RFC 7306 with masks
                ByteBuf value = Unpooled.buffer(8).writeLong(updated);
                tb.place(h.remoteTo(), value);
                value.release();
            } finally {
                target.release();
            }
        }
        tx.enqueue(stream.messages().atomicResponse(new AtomicResponseHeader(h.requestId(), original),
                stream.ctx().alloc()), releasesSlot());
        tx.transmit(false);
    }

    /** The IRD slot frees once the response left: its last write completed (RFC 5040 §5.2). */
    private ChannelPromise releasesSlot() {
        ResponseWritten p = sparePromises.poll();
        if (p == null) {
            return new ResponseWritten();
        }
        p.rearm();
        return p;
    }

    /**
     * A Read or Atomic Response's write: its IRD slot is free once the response left, also when it was copied on
     * its way down (as on an RNIC: a request counts against IRD until its response is sent).
     */
    private final class ResponseWritten extends WritePromise implements Transmitter.CompletesOnceSent {
        ResponseWritten() {
            super(stream.ctx().channel());
        }

        @Override
        protected void written(Throwable cause) {
            if (cause == null) {
                slots.release();
                sparePromises.offer(this); // reported: nothing below holds it any more
            }
        }
    }

    /** The RDMAP Remote Protection error for a Read Request's or atomic's refused source (RFC 5040 §7). */
    private static RdmapError protectionError(TaggedAccessResult r) {
        switch (r) {
            case INVALID_STAG:
                return RdmapError.INVALID_STAG;
            case BASE_OR_BOUNDS:
                return RdmapError.BASE_OR_BOUNDS_VIOLATION;
            case ACCESS_RIGHTS:
                return RdmapError.ACCESS_RIGHTS_VIOLATION;
            case TO_WRAP:
                return RdmapError.TO_WRAP;
            default:
                throw new IllegalArgumentException(r.name());
        }
    }

    private RegionViews sources() {
        RegionViews v = sources;
        if (v == null) {
            sources = v = new RegionViews();
        }
        return v;
    }
}
