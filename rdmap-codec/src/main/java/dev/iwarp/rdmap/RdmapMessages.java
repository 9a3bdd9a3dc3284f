package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpError;
import dev.iwarp.ddp.DdpOutboundMessage;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpSegmenter;
import dev.iwarp.ddp.DdpUntaggedSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

import java.util.Objects;

/**
 * The RDMAP messages of one stream, in both directions, for the stream's version: which control
 * octet, buffer model, queue and header each message type has on the way out (RFC 5040 §4, RFC 7306),
 * and the header checks every incoming segment passes before the engine acts on it (RFC 5040 §7,
 * RFC 5041 §7.2). The engine builds and judges messages only through this class. ({@link RdmapSegments}
 * by contrast makes single segments with explicit MSNs, for tests and tools, outside any stream.)
 *
 * <p>Outbound methods return {@link DdpOutboundMessage}s that are cut into segments lazily; a method
 * taking a {@code payload} takes ownership of it, one taking an allocator allocates the RDMAP header.
 * MSNs come from the stream's {@link DdpSegmenter}. Confined to the stream's event loop.
 */
public final class RdmapMessages {
    /** STag the Initiator names in a Write or Read RTR (siw uses 1: some hardware treats 0 specially). */
    public static final int RTR_STAG = 1;

    private final DdpSegmenter segmenter;
    private final int version;

    /** @param segmenter the stream's segmenter; its DDP version is the stream's RDMAP version too */
    public RdmapMessages(DdpSegmenter segmenter) {
        this.segmenter = Objects.requireNonNull(segmenter, "segmenter");
        this.version = segmenter.ddpVersion();
    }

    /** DDP and RDMAP version of the stream: 1, or 0 on an RDMAC stream (RFC 5044 Appendix C). */
    public int version() {
        return version;
    }

    private int control(RdmapOpcode op) {
        return RdmapControl.encode(version, op);
    }

    // ------------------------------------------------------------------ outbound

    /** An RDMA Write (RFC 5040 §4.3): tagged, to the Data Sink's STag and TO. */
    public DdpOutboundMessage rdmaWrite(int sinkStag, long sinkTo, ByteBuf payload) {
        return segmenter.tagged(control(RdmapOpcode.RDMA_WRITE), sinkStag, sinkTo, payload);
    }

    /** An RDMA Read Response (RFC 5040 §4.5): tagged, to the request's Data Sink STag and TO. */
    public DdpOutboundMessage readResponse(int sinkStag, long sinkTo, ByteBuf payload) {
        return segmenter.tagged(control(RdmapOpcode.RDMA_READ_RESPONSE), sinkStag, sinkTo, payload);
    }

    /**
     * One of the four Send variants (RFC 5040 §4.6): untagged, QN 0, with the Invalidate STag in
     * RsvdULP[8:39] for the "with Invalidate" ones.
     *
     * @throws IllegalArgumentException for a non-Send opcode, or an Invalidate STag without Invalidate
     */
    public DdpOutboundMessage send(RdmapOpcode op, int invalidateStag, ByteBuf payload) {
        try {
            RdmapSegments.checkSend(op, invalidateStag);
        } catch (IllegalArgumentException e) {
            payload.release();
            throw e;
        }
        return segmenter.untagged(control(op), invalidateStag, RdmapOpcode.Queues.SEND, payload);
    }

    /** An RDMA Read Request (RFC 5040 §4.4): untagged, QN 1, the 28-octet header. */
    public DdpOutboundMessage readRequest(ReadRequestHeader header, ByteBufAllocator alloc) {
        return readRequest(header.sinkStag(), header.sinkTo(), header.size(), header.sourceStag(), header.sourceTo(),
                alloc);
    }

    /** As {@link #readRequest(ReadRequestHeader, ByteBufAllocator)}, from the header's fields (no header object). */
    public DdpOutboundMessage readRequest(int sinkStag, long sinkTo, long size, int sourceStag, long sourceTo,
                                          ByteBufAllocator alloc) {
        ReadRequestHeader.checkSize(size); // before the buffer is taken
        ByteBuf payload = alloc.buffer(ReadRequestHeader.LENGTH);
        ReadRequestHeader.encode(payload, sinkStag, sinkTo, size, sourceStag, sourceTo);
        return single(RdmapOpcode.RDMA_READ_REQUEST, payload);
    }

    /**
     * As {@link #readRequest(int, long, long, int, long, ByteBufAllocator)}, the 28 octets written into {@code payload}
     * from its writer index: a buffer the caller reuses once the lower layer let go of it (it copied a small
     * ULPDU, or sent it), so that a Read Request takes nothing from an allocator. The message takes the reference.
     */
    public DdpOutboundMessage readRequest(int sinkStag, long sinkTo, long size, int sourceStag, long sourceTo,
                                          ByteBuf payload) {
        try {
            ReadRequestHeader.checkSize(size);
        } catch (IllegalArgumentException e) {
            payload.release();
            throw e;
        }
        ReadRequestHeader.encode(payload, sinkStag, sinkTo, size, sourceStag, sourceTo);
        return single(RdmapOpcode.RDMA_READ_REQUEST, payload);
    }

    /** RFC 7306 Immediate Data (with SE when {@code solicited}): untagged, QN 0, 8 octets. */
    public DdpOutboundMessage immediateData(boolean solicited, long value, ByteBufAllocator alloc) {
        ByteBuf payload = alloc.buffer(ImmediateData.LENGTH);
        new ImmediateData(value).encode(payload);
        return single(solicited ? RdmapOpcode.IMMEDIATE_DATA_WITH_SE : RdmapOpcode.IMMEDIATE_DATA, payload);
    }

    /** An RFC 7306 Atomic Request: untagged, QN 1, 52-octet header. */
    public DdpOutboundMessage atomicRequest(AtomicRequestHeader header, ByteBufAllocator alloc) {
        ByteBuf payload = alloc.buffer(AtomicRequestHeader.LENGTH);
        header.encode(payload);
        return single(RdmapOpcode.ATOMIC_REQUEST, payload);
    }

    /** An RFC 7306 Atomic Response: untagged, QN 3, 12-octet header. */
    public DdpOutboundMessage atomicResponse(AtomicResponseHeader header, ByteBufAllocator alloc) {
        ByteBuf payload = alloc.buffer(AtomicResponseHeader.LENGTH);
        header.encode(payload);
        return single(RdmapOpcode.ATOMIC_RESPONSE, payload);
    }

    /** The RFC 6581 Send RTR: a zero-length Send on QN 0 (it takes MSN 1). */
    public DdpOutboundMessage sendRtr() {
        return send(RdmapOpcode.SEND, 0, Unpooled.EMPTY_BUFFER);
    }

    /** The RFC 6581 Write RTR: a zero-length RDMA Write to STag {@value #RTR_STAG}, TO 0. */
    public DdpOutboundMessage writeRtr() {
        return rdmaWrite(RTR_STAG, 0, Unpooled.EMPTY_BUFFER);
    }

    /** The RFC 6581 Read RTR's header: size 0, sink STag 0 TO 0, source STag {@value #RTR_STAG} TO 0. */
    public static ReadRequestHeader readRtr() {
        return new ReadRequestHeader(0, 0, 0, RTR_STAG, 0);
    }

    /** The stream's Terminate (RFC 5040 §5.4): QN 2, MSN 1, MO 0, L=1, in the stream's version. */
    public DdpUntaggedSegment terminate(TerminateMessage message, ByteBufAllocator alloc) {
        return message.toSegment(alloc, version);
    }

    private DdpOutboundMessage single(RdmapOpcode op, ByteBuf payload) {
        return segmenter.untagged(control(op), 0, op.queueNumber(), payload);
    }

    // ------------------------------------------------------------------ inbound

    /**
     * The message type of an incoming segment, after the checks every segment passes, in this order:
     * DDP version (RFC 5041 §7.2: EType by the T bit, no header quoted), RDMAP version (0/2/0x05),
     * a defined OpCode with the buffer model it uses (0/2/0x06), and for untagged segments the
     * OpCode's queue (DDP 1/2/0x01).
     *
     * @throws RdmapException naming the Terminate for the first check that fails
     */
    public RdmapOpcode receive(DdpSegment segment) {
        return receive(segment.ddpVersion(), segment.isTagged(), segment.rsvdUlp(),
                segment.isTagged() ? 0 : ((DdpUntaggedSegment) segment).qn());
    }

    /**
     * As {@link #receive(DdpSegment)} for a tagged segment whose header is read in place: its DDP version
     * and RsvdULP octet.
     */
    public RdmapOpcode receiveTagged(int ddpVersion, int rsvdUlp) {
        return receive(ddpVersion, true, rsvdUlp, 0);
    }

    /** As {@link #receive(DdpSegment)} for an untagged segment whose header is read in place. */
    public RdmapOpcode receiveUntagged(int ddpVersion, int rsvdUlp, int qn) {
        return receive(ddpVersion, false, rsvdUlp, qn);
    }

    private RdmapOpcode receive(int ddpVersion, boolean tagged, int control, int qn) {
        if (ddpVersion != version) {
            throw new RdmapException(TerminateCause.of(tagged ? DdpError.INVALID_DDP_VERSION_TAGGED
                    : DdpError.INVALID_DDP_VERSION_UNTAGGED), "DDP version " + ddpVersion);
        }
        if (RdmapControl.version(control) != version) {
            throw new RdmapException(RdmapError.INVALID_RDMAP_VERSION, "RDMAP version " + RdmapControl.version(control));
        }
        RdmapOpcode op = RdmapOpcode.fromValue(RdmapControl.opcode(control));
        if (op == null || op.tagged() != tagged) {
            throw new RdmapException(RdmapError.UNEXPECTED_OPCODE, "opcode 0x"
                    + Integer.toHexString(RdmapControl.opcode(control)) + (tagged ? " tagged" : " untagged"));
        }
        if (!tagged && qn != op.queueNumber()) {
            throw new RdmapException(TerminateCause.of(DdpError.INVALID_QN), "QN " + Integer.toUnsignedLong(qn)
                    + " for " + op.rfcName());
        }
        return op;
    }
}
