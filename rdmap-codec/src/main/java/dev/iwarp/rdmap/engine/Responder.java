package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.AccessFlags;
import dev.iwarp.ddp.RegionViews;
import dev.iwarp.ddp.TaggedAccessResult;
import dev.iwarp.ddp.TaggedBuffer;
import dev.iwarp.ddp.TaggedBufferTable;
import dev.iwarp.ddp.UntaggedPlacementResult;
import dev.iwarp.ddp.UntaggedReceiveQueue;
import dev.iwarp.rdmap.ImmediateData;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.RdmapException;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.PeerActivity;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.Sge;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The responder of one stream (as siw's qp_rx for inbound requests): RDMA Write placement, Sends and
 * Immediate Data into posted receives, remote invalidation (RFC 5040 §5, RFC 7306), and, through its
 * {@link InboundReadQueue}, the RDMA Read and Atomic responder under IRD (responses in request order, each
 * holding its IRD slot until written). Every check that fails throws {@link RdmapException} with the Terminate to send; nothing
 * of a refused segment is placed. Confined to the event loop.
 */
final class Responder {
    private static final VerbsAccess VERBS = VerbsAccess.get();
    private final RdmapStream stream;
    /** Where receive completions go. */
    private final CompletionQueue recvCq;
    /** The tagged buffers (STags) the peer's Writes, Reads and atomics address (RFC 5041 §4). */
    private final TaggedBufferTable table;
    /** The protection domain the STags and receive SGEs must belong to. */
    private final ProtectionDomain pd;
    /** Receives posted before RTS; handed to {@link #receives} when the stream is established. */
    private ArrayDeque<RecvRequest> earlyReceives; // null until the first and again after RTS: idle streams hold none
    /**
     * Receives posted from other threads, in posting order: taken before any Send is placed, so a
     * receive is in effect when {@code postRecv} returns, as with libibverbs (a peer told to send right
     * after the post cannot overtake it), without a lock on the event loop.
     */
    private final ConcurrentLinkedQueue<RecvRequest> postedElsewhere = new ConcurrentLinkedQueue<>();
    /** QN 0: Sends and Immediate Data into posted receives (RFC 5041 §5.3). */
    private UntaggedReceiveQueue<RecvRequest> receives;
    /** What the peer did to us ({@link PeerActivity}); event loop only. */
    private long peerWrites;
    private long peerWriteOctets;
    private long sendsReceived;
    private long sendOctetsReceived;
    /** QN 1: the Read and Atomic responder under IRD. */
    private final InboundReadQueue reads;

    Responder(RdmapStream stream, MessageTransmitter tx, CompletionQueue recvCq, TaggedBufferTable table,
            ProtectionDomain pd) {
        this.stream = stream;
        this.recvCq = recvCq;
        this.table = table;
        this.pd = pd;
        reads = new InboundReadQueue(stream, tx, table, pd);
    }

    /** RTS: IRD from the lower layer; a Send RTR to consume makes QN 0 start at MSN 2 (RFC 6581). */
    void start(int ird, boolean consumesSendRtr) {
        receives = new UntaggedReceiveQueue<>(RdmapOpcode.Queues.SEND, consumesSendRtr ? 2 : 1);
        ArrayDeque<RecvRequest> early = earlyReceives;
        earlyReceives = null;
        RecvRequest r;
        while (early != null && (r = early.poll()) != null) {
            post(r);
        }
        reads.start(ird);
    }

    /** Whether the queue of receives posted before RTS exists (it does only between the first such receive and RTS). */
    boolean holdsEarlyReceiveQueue() {
        return earlyReceives != null;
    }

    /** Receives in effect for the peer's Sends (posted, not yet filled or flushed); 0 before RTS. */
    int postedReceives() {
        return receives == null ? 0 : receives.postedCount();
    }

    /** From any thread: the receive is in effect for the next Send from now on. */
    void postRecvFromAnyThread(RecvRequest r) {
        postedElsewhere.add(r);
    }

    /** Takes the receives posted from other threads, in order. On the event loop. */
    void takePosted() {
        RecvRequest r;
        while ((r = postedElsewhere.poll()) != null) {
            postRecv(r);
        }
    }

    void postRecv(RecvRequest r) {
        QpState s = stream.state();
        if (s == QpState.ERROR || s == QpState.TERMINATE) {
            VERBS.add(recvCq, VERBS.error(r.wrId(), WcOpcode.RECV, WcStatus.WR_FLUSH_ERR, "queue pair in " + s));
            return;
        }
        MemoryRegion mr = r.sge().region();
        if (!mr.isValid() || mr.pd() != pd || !mr.access().contains(Access.LOCAL_WRITE)) {
            VERBS.add(recvCq, VERBS.error(r.wrId(), WcOpcode.RECV, WcStatus.LOC_PROT_ERR, "receive buffer " + mr
                    + " is not a valid LOCAL_WRITE region of " + pd));
            return;
        }
        if (receives == null) {
            if (earlyReceives == null) {
                earlyReceives = new ArrayDeque<>(4);
            }
            earlyReceives.add(r);
        } else {
            post(r);
        }
    }

    private void post(RecvRequest r) {
        Sge sge = r.sge();
        receives.post(VERBS.taggedBuffer(sge.region()), sge.offset(), sge.length(), r); // on demand: memory when placed
    }

    // ------------------------------------------------------------------ tagged

    /**
     * Where an RDMA Write segment (RFC 5040 §4.3) of {@code len} payload octets goes: its tagged buffer,
     * validated against the STag table before any octet is placed, or {@code null} for no payload.
     */
    TaggedBuffer writeTarget(int stag, long to, boolean last, int len) {
        if (len == 0) {
            peerWrites += last ? 1 : 0;
            return null; // RFC 5040 §5.1 / RFC 6581: zero-length Writes are not validated
        }
        TaggedAccessResult r = table.check(stag, pd, to, len, AccessFlags.REMOTE_WRITE);
        if (r != TaggedAccessResult.OK) {
            // a Write refused for its rights is RDMAP's access rights violation; the rest are DDP's (RFC 6580 registries)
            throw new RdmapException(r == TaggedAccessResult.ACCESS_RIGHTS
                    ? TerminateCause.of(RdmapError.ACCESS_RIGHTS_VIOLATION) : TerminateCause.of(r.ddpError()),
                    "RDMA Write " + len + " octets to " + hex(stag) + "@0x" + Long.toHexString(to) + ": " + r);
        }
        peerWrites += last ? 1 : 0; // a refused Write is not the peer's Write placed: it ended the stream
        return table.lookup(stag);
    }

    /** The payload of the RDMA Write segment {@link #writeTarget} named was placed. */
    void writePlaced(int len) {
        peerWriteOctets += len;
    }

    /** Read and Atomic Requests holding an IRD slot until their response left (RFC 5040 §5.2). For monitoring. */
    int irdInUse() {
        return reads.irdInUse();
    }

    /** What the peer did to us so far; read it on the event loop (or once the channel closed). */
    PeerActivity peerActivity() {
        return new PeerActivity(peerWrites, peerWriteOctets, reads.readsAnswered(), reads.readOctetsAnswered(), sendsReceived,
                sendOctetsReceived);
    }

    // ------------------------------------------------------------------ Read and Atomic Requests

    /** An RDMA Read Request (RFC 5040 §4.4): validated, its response queued under IRD. */
    void onReadRequest(InboundUntagged u) {
        reads.onReadRequest(u);
    }

    /** An RFC 7306 Atomic Request: performed, its response queued under IRD. */
    void onAtomicRequest(InboundUntagged u) {
        reads.onAtomicRequest(u);
    }

    // ------------------------------------------------------------------ Sends

    /** A Send variant or Immediate Data segment: placed into the next posted receive (RFC 5040 §5.3). */
    void onSend(InboundUntagged u, RdmapOpcode op) {
        takePosted();
        boolean immediate = op == RdmapOpcode.IMMEDIATE_DATA || op == RdmapOpcode.IMMEDIATE_DATA_WITH_SE;
        long immediateValue = 0;
        UntaggedPlacementResult<RecvRequest> p;
        if (immediate) {
            // RFC 7306: one segment of exactly 8 octets, reported in the completion, consuming a receive
            if (u.payloadLength() != ImmediateData.LENGTH || !u.last || u.mo != 0) {
                throw new RdmapException(RdmapError.UNEXPECTED_OPCODE, "Immediate Data of " + u.payloadLength()
                        + " octets");
            }
            immediateValue = u.payload.getLong(u.payload.readerIndex());
            p = receives.place(u.qn, u.msn, u.mo, u.last, u.rsvdUlp, u.rsvdUlp2, Unpooled.EMPTY_BUFFER);
        } else {
            p = receives.place(u.qn, u.msn, u.mo, u.last, u.rsvdUlp, u.rsvdUlp2, u.payload);
        }
        if (p.isError()) {
            throw new RdmapException(TerminateCause.of(p.error()), op.rfcName() + " MSN "
                    + Integer.toUnsignedLong(u.msn) + " MO " + Integer.toUnsignedLong(u.mo) + " of "
                    + u.payloadLength() + " octets: " + p.error().description());
        }
        if (p.isDelivered()) {
            delivered(p, u, op, immediate, immediateValue);
        }
    }

    /**
     * A Send's header, its payload not read yet: whether it passes every check {@link #onSend} makes (RFC 5041
     * §7.2: MSN, a posted buffer, MO, length), so that its {@code payloadLength} octets can be read straight into
     * the posted receive ({@link #sendOffset}, {@link #placeSendAt}, {@link #sendView}, then {@link #sendPlaced}).
     * False: the Send takes the whole-message path ({@link #onSend}), which names the error.
     */
    boolean acceptsSend(InboundUntagged u, int payloadLength) {
        takePosted();
        return receives.check(u.qn, u.msn, u.mo, payloadLength) == null;
    }

    /** Where an accepted Send's payload begins in the first posted receive's region. */
    int sendOffset() {
        return receives.placeOffset();
    }

    void placeSendAt(int offset, ByteBuf src, int srcIndex, int len) {
        receives.placeAt(offset, src, srcIndex, len);
    }

    ByteBuf sendView(int offset, int length, RegionViews views) {
        return receives.view(offset, length, views);
    }

    /** The accepted Send's {@code len} payload octets are in the posted receive: a completion for its L=1 segment. */
    void sendPlaced(InboundUntagged u, RdmapOpcode op, int len) {
        UntaggedPlacementResult<RecvRequest> p = receives.placed(len, u.last, u.rsvdUlp, u.rsvdUlp2);
        if (p.isDelivered()) {
            delivered(p, u, op, false, 0);
        }
    }

    private void delivered(UntaggedPlacementResult<RecvRequest> p, InboundUntagged u, RdmapOpcode op, boolean immediate,
            long immediateValue) {
        int stag = u.rsvdUlp2;
        if (op.invalidates()) {
            invalidate(stag); // RFC 5040 §5.3: invalidate before delivering
        }
        sendsReceived++;
        sendOctetsReceived += p.messageLength();
        VERBS.addSuccess(recvCq, p.context().wrId(), immediate ? WcOpcode.RECV_IMMEDIATE : WcOpcode.RECV,
                p.messageLength(), op.invalidates(), op.invalidates() ? stag : 0, immediateValue, op.solicitedEvent());
    }

    /**
     * RFC 5040 §5.3: only an STag of this stream's PD registered with {@link Access#REMOTE_INVALIDATE}
     * may be invalidated by the peer. Every refusal (unknown, already invalid, another PD, not
     * registered for it) gets the same Terminate, Remote Operation / "STag cannot be invalidated"
     * (RFC 5040 §7.2), so that the peer cannot tell them apart (RFC 5042).
     */
    private void invalidate(int stag) {
        if (!table.invalidateRemotely(stag, pd)) {
            throw new RdmapException(RdmapError.REMOTE_OPERATION_STAG_CANNOT_BE_INVALIDATED,
                    "Send with Invalidate of " + hex(stag) + ", which it may not invalidate");
        }
    }

    /** Completes every posted receive in error (RFC 5041 §6). */
    void flush(String why) {
        takePosted();
        if (receives != null) {
            receives.flush(r -> VERBS.add(recvCq, VERBS.error(r.wrId(), WcOpcode.RECV, WcStatus.WR_FLUSH_ERR, why)));
        }
        RecvRequest r;
        while (earlyReceives != null && (r = earlyReceives.poll()) != null) {
            VERBS.add(recvCq, VERBS.error(r.wrId(), WcOpcode.RECV, WcStatus.WR_FLUSH_ERR, why));
        }
    }

    static String hex(int stag) {
        return String.format("STag 0x%08x", stag);
    }
}
