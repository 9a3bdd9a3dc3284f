package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpError;
import dev.iwarp.ddp.DdpOutboundMessage;
import dev.iwarp.ddp.RegionViews;
import dev.iwarp.ddp.UntaggedSlotQueue;
import dev.iwarp.ddp.TaggedAccessResult;
import dev.iwarp.ddp.TaggedBuffer;
import dev.iwarp.ddp.TaggedBufferTable;
import dev.iwarp.ddp.AccessFlags;
import dev.iwarp.ddp.llp.RtrMessage;
import dev.iwarp.rdmap.AtomicOp;
import dev.iwarp.rdmap.AtomicRequestHeader;
import dev.iwarp.rdmap.AtomicResponseHeader;
import dev.iwarp.rdmap.RdmapError;
import dev.iwarp.rdmap.RdmapException;
import dev.iwarp.rdmap.RdmapMessages;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QpState;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.Sge;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.buffer.ByteBuf;

import java.util.ArrayDeque;
import java.util.Set;

/**
 * The requester of one stream (RFC 5040 §5, as siw's send queue and ORQ): posted send-queue requests
 * start in order while ORD and read fences allow (§5.2, §5.5), become DDP messages for the
 * {@link Transmitter}, and complete in submission order; Read Responses and Atomic Responses are
 * matched against the outstanding requests and placed into their sinks. Confined to the event loop.
 */
final class Requester {
    private static final VerbsAccess VERBS = VerbsAccess.get();
    private final RdmapStream stream;
    /** Where requests and the RTR are written and flushed. */
    private final MessageTransmitter tx;
    /** Where send-queue completions go, in submission order. */
    private final CompletionQueue sendCq;
    /** The tagged buffers (STags) Read and Atomic Responses are placed into (RFC 5041 §4). */
    private final TaggedBufferTable table;
    /** The protection domain local SGEs and sinks must belong to. */
    private final ProtectionDomain pd;
    private final ArrayDeque<SendRequest> sendQueue = new ArrayDeque<>(1); // grows as used: idle streams stay small
    /** RDMA Reads and atomics awaiting their response, oldest first (the ORQ). */
    private final ArrayDeque<Outstanding> outstanding = new ArrayDeque<>(1); // grows as used: idle streams stay small
    /** Started requests, whose completions leave in submission order, and the objects they reuse. */
    private final SubmissionOrder order;
    /**
     * The slices of registered memory Sends and Writes are sent from, reused: no slice object per message.
     * Taken at the first payload: an idle stream holds none.
     */
    private RegionViews sources;
    /** QN 3: Atomic Responses to our requests. */
    private UntaggedSlotQueue atomicResponses;
    private int ord;
    private int nextAtomicId;

    Requester(RdmapStream stream, MessageTransmitter tx, CompletionQueue sendCq, TaggedBufferTable table,
            ProtectionDomain pd) {
        this.stream = stream;
        this.tx = tx;
        this.sendCq = sendCq;
        this.table = table;
        this.pd = pd;
        order = new SubmissionOrder(stream, sendCq);
    }

    /** RTS: ORD from the lower layer; the Initiator's RFC 6581 RTR goes first. */
    void start(int ord, RtrMessage rtrToSend) {
        this.ord = ord;
        atomicResponses = new UntaggedSlotQueue(RdmapOpcode.Queues.ATOMIC_RESPONSE, Math.max(1, ord));
        if (rtrToSend != null) {
            sendRtr(rtrToSend);
        }
    }

    private void sendRtr(RtrMessage type) {
        RdmapMessages messages = stream.messages();
        switch (type) {
            case WRITE:
                tx.enqueue(messages.writeRtr(), null);
                break;
            case READ:
                // a zero-length Read takes an ORD credit and gets a zero-length Read Response
                outstanding.add(new Outstanding().read(null, 0, 0, 0));
                tx.enqueue(messages.readRequest(RdmapMessages.readRtr(), stream.ctx().alloc()), null);
                break;
            case SEND:
            default:
                tx.enqueue(messages.sendRtr(), null);
                break;
        }
        tx.transmit(true);
    }

    void postSend(SendRequest wr) {
        QpState s = stream.state();
        if (s == QpState.ERROR || s == QpState.TERMINATE || s == QpState.CLOSING) {
            stream.sendSlotFreed();
            VERBS.add(sendCq, VERBS.error(wr.wrId(), opcodeOf(wr), WcStatus.WR_FLUSH_ERR, "queue pair in " + s));
            return;
        }
        if (s != QpState.RTS) {
            sendQueue.add(wr);
            return;
        }
        if (sendQueue.isEmpty() && mayStart(wr)) {
            execute(wr); // nothing queued before it: starts at once, without passing through the queue
        } else {
            sendQueue.add(wr);
        }
        pump(tx.flushPolicy().postFlushes(), true); // within a read batch, channelReadComplete flushes
    }

    /** Starts queued requests in order while ORD and fences allow (RFC 5040 §5.2, §5.5), then transmits. */
    void pump(boolean flush) {
        pump(flush, false);
    }

    /** As {@link #pump(boolean)}; {@code posted}: called by {@link #postSend}, whose caller sees no completion inside it. */
    private void pump(boolean flush, boolean posted) {
        SendRequest wr;
        while ((wr = sendQueue.peek()) != null && mayStart(wr)) {
            sendQueue.poll();
            execute(wr);
        }
        if (stream.isRts() || stream.state() == QpState.CLOSING) {
            if (posted) {
                tx.transmitPosted(flush);
            } else {
                tx.transmit(flush);
            }
        }
    }

    /** Whether {@code wr}, next in the send queue, may start now (RFC 5040 §5.2 ORD, §5.5 read fence; RFC 6581 RTR). */
    private boolean mayStart(SendRequest wr) {
        if (!stream.isRts() || stream.awaitingRtr()) {
            return false;
        }
        if (wr.isFenced() && !outstanding.isEmpty()) {
            return false;
        }
        return !needsResponse(wr) || outstanding.size() < ord; // ORD: no more outstanding Read/atomic Requests
    }

    private static boolean needsResponse(SendRequest wr) {
        switch (wr.kind()) {
            case RDMA_READ:
            case ATOMIC_FETCH_ADD:
            case ATOMIC_SWAP:
            case ATOMIC_COMPARE_SWAP:
                return true;
            default:
                return false;
        }
    }

    private void execute(SendRequest wr) {
        Sge sge = wr.local();
        if (sge != null) {
            MemoryRegion mr = sge.region();
            if (!mr.isValid() || mr.pd() != pd || (needsResponse(wr) && !mr.access().contains(Access.LOCAL_WRITE))) {
                fail(wr, VERBS.error(wr.wrId(), opcodeOf(wr), WcStatus.LOC_PROT_ERR,
                        "local SGE " + sge + (mr.pd() != pd ? " of another PD" : "")));
                return;
            }
        }
        RdmapMessages messages = stream.messages();
        switch (wr.kind()) {
            case SEND:
            case SEND_WITH_INVALIDATE: {
                RdmapOpcode op = wr.kind() == SendRequest.Kind.SEND
                        ? (wr.isSolicited() ? RdmapOpcode.SEND_WITH_SE : RdmapOpcode.SEND)
                        : (wr.isSolicited() ? RdmapOpcode.SEND_WITH_SE_AND_INVALIDATE : RdmapOpcode.SEND_WITH_INVALIDATE);
                tx.enqueue(source(messages.send(op, wr.invalidateStag(), slice(sge)), sge), order.startSent(wr));
                break;
            }
            case RDMA_WRITE:
                if (sge.length() > 0 && Long.compareUnsigned(wr.remoteTo() + sge.length() - 1, wr.remoteTo()) < 0) {
                    fail(wr, VERBS.error(wr.wrId(), WcOpcode.RDMA_WRITE, WcStatus.LOC_PROT_ERR,
                            "remote TO + length wraps past 2^64"));
                    return;
                }
                tx.enqueue(source(messages.rdmaWrite(wr.remoteStag(), wr.remoteTo(), slice(sge)), sge),
                        order.startSent(wr));
                break;
            case RDMA_READ: {
                Outstanding slot = order.startRead(wr, sge.region().stag(), sge.to(), sge.length());
                outstanding.add(slot);
                tx.enqueue(messages.readRequest(sge.region().stag(), sge.to(), sge.length(), wr.remoteStag(),
                        wr.remoteTo(), slot.requestOctets()), null);
                requestHeld();
                break;
            }
            case IMMEDIATE_DATA:
                tx.enqueue(messages.immediateData(wr.isSolicited(), wr.data(), stream.ctx().alloc()),
                        order.startSent(wr));
                break;
            case ATOMIC_FETCH_ADD:
            case ATOMIC_SWAP:
            case ATOMIC_COMPARE_SWAP: {
                AtomicOp op = wr.kind() == SendRequest.Kind.ATOMIC_FETCH_ADD ? AtomicOp.FETCH_ADD
                        : wr.kind() == SendRequest.Kind.ATOMIC_SWAP ? AtomicOp.SWAP : AtomicOp.COMPARE_SWAP;
                int id = ++nextAtomicId == 0 ? ++nextAtomicId : nextAtomicId; // 0 marks plain Reads
                outstanding.add(order.startAtomic(wr, id));
                tx.enqueue(messages.atomicRequest(new AtomicRequestHeader(op.value(), id, wr.remoteStag(),
                        wr.remoteTo(), wr.data(), wr.dataMask(), wr.compare(), wr.compareMask()), stream.ctx().alloc()), null);
                requestHeld();
                break;
            }
            default:
                throw new IllegalStateException(wr.kind().name());
        }
    }

    private void requestHeld() {
        tx.flushPolicy().requestWritten();
    }

    /** Held requests go out before the responder runs dry ({@link FlushPolicy#responseArrived}). */
    private void flushHeldRequestsBeforeResponderRunsDry() {
        tx.flushPolicy().responseArrived(outstanding.size(), ord);
    }

    private ByteBuf slice(Sge sge) {
        return sources().slice(sge.region().memory(), sge.offset(), sge.length());
    }

    /**
     * A Send or Write from a region peers may write (REMOTE_WRITE or REMOTE_ATOMIC) is copied segment
     * by segment when the lower layer checksums payloads: a peer's Write landing meanwhile must not
     * make our CRC disagree with the octets sent. Regions only this host writes are sent zero-copy.
     */
    private DdpOutboundMessage source(DdpOutboundMessage m, Sge sge) {
        Set<Access> access = sge.region().access();
        if (stream.parameters().digestsPayload() && sge.length() > 0
                && (access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))) {
            m.copyEachSegment(stream.ctx().alloc());
        }
        return m;
    }

    /** {@code wr} fails before it started: its completion still waits for every earlier one. */
    private void fail(SendRequest wr, Completion c) {
        order.fail(wr, c);
    }

    // ------------------------------------------------------------------ responses

    /**
     * Where an RDMA Read Response segment (RFC 5040 §4.5) of {@code len} payload octets goes: the oldest
     * outstanding Read's sink, checked before any octet is placed; {@code null} for no payload.
     */
    TaggedBuffer readResponseTarget(int stag, long to, boolean last, int len) {
        Outstanding o = outstanding.peek();
        if (o == null || o.atomicId != 0) {
            throw new RdmapException(RdmapError.UNEXPECTED_OPCODE, "Read Response without an outstanding Read");
        }
        if (stag != o.sinkStag && !(len == 0 && o.size == 0)) {
            throw new RdmapException(TerminateCause.of(DdpError.INVALID_STAG), "Read Response to "
                    + Responder.hex(stag) + ", the outstanding Read's sink is " + Responder.hex(o.sinkStag));
        }
        if ((len > 0 && to != o.sinkTo + o.received) || (long) o.received + len > o.size) {
            throw new RdmapException(TerminateCause.of(DdpError.BASE_OR_BOUNDS_VIOLATION), "Read Response TO 0x"
                    + Long.toHexString(to) + " +" + len + " outside the outstanding Read");
        }
        if (last && o.received + len != o.size) {
            throw new RdmapException(TerminateCause.of(DdpError.BASE_OR_BOUNDS_VIOLATION), "Read Response of "
                    + (o.received + len) + " octets for a Read of " + o.size);
        }
        if (len == 0) {
            return null;
        }
        TaggedAccessResult r = table.check(stag, pd, to, len, AccessFlags.LOCAL_WRITE);
        if (r != TaggedAccessResult.OK) {
            throw new RdmapException(TerminateCause.of(r.ddpError()), "Read Response sink: " + r);
        }
        return table.lookup(stag);
    }

    /** The payload of the Read Response segment {@link #readResponseTarget} named was placed. */
    void readResponsePlaced(boolean last, int len) {
        Outstanding o = outstanding.peek();
        o.received += len;
        if (last) {
            outstanding.poll();
            if (o.wr != null) {
                order.succeeded(o, o.size, 0);
            }
            pump(false);
            flushHeldRequestsBeforeResponderRunsDry();
        }
    }

    /** An RFC 7306 Atomic Response: the original value goes to the oldest outstanding atomic's result. */
    void onAtomicResponse(InboundUntagged u) {
        Outstanding o = outstanding.peek();
        if (u.payloadLength() != AtomicResponseHeader.LENGTH || o == null || o.atomicId == 0) {
            throw new RdmapException(RdmapError.UNEXPECTED_OPCODE, "Atomic Response without a matching request");
        }
        DdpError e = atomicResponses.accept(u.qn, u.msn, u.mo);
        if (e != null) {
            throw new RdmapException(TerminateCause.of(e), "Atomic Response MSN " + Integer.toUnsignedLong(u.msn));
        }
        atomicResponses.release();
        AtomicResponseHeader h = AtomicResponseHeader.decode(u.payload, u.payload.readerIndex());
        if (h.requestId() != o.atomicId) {
            throw new RdmapException(RdmapError.UNEXPECTED_OPCODE, "Atomic Response id " + h.requestId()
                    + ", expected " + o.atomicId);
        }
        outstanding.poll();
        SendRequest wr = o.wr;
        Sge result = wr.local();
        result.region().memory().setLong(result.offset(), h.originalValue());
        order.succeeded(o, 8, h.originalValue());
        pump(false);
        flushHeldRequestsBeforeResponderRunsDry();
    }

    /** Read and Atomic Requests outstanding: the ORD slots in use (RFC 5040 §5.2). For monitoring. */
    int ordInUse() {
        return outstanding.size();
    }

    /** Completes every outstanding, started and queued request in error (RFC 5041 §6). */
    void flush(WcStatus outstandingStatus, String why) {
        Outstanding o;
        while ((o = outstanding.poll()) != null) {
            if (o.wr != null) {
                o.outcome(VERBS.error(o.wr.wrId(), opcodeOf(o.wr), outstandingStatus, why));
            }
        }
        order.flush(why);
        SendRequest wr;
        while ((wr = sendQueue.poll()) != null) {
            stream.sendSlotFreed();
            VERBS.add(sendCq, VERBS.error(wr.wrId(), opcodeOf(wr), WcStatus.WR_FLUSH_ERR, why));
        }
    }

    static WcOpcode opcodeOf(SendRequest wr) {
        switch (wr.kind()) {
            case RDMA_WRITE:
                return WcOpcode.RDMA_WRITE;
            case RDMA_READ:
                return WcOpcode.RDMA_READ;
            case IMMEDIATE_DATA:
                return WcOpcode.IMMEDIATE_DATA;
            case ATOMIC_FETCH_ADD:
                return WcOpcode.ATOMIC_FETCH_ADD;
            case ATOMIC_SWAP:
                return WcOpcode.ATOMIC_SWAP;
            case ATOMIC_COMPARE_SWAP:
                return WcOpcode.ATOMIC_COMPARE_SWAP;
            default:
                return WcOpcode.SEND;
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
