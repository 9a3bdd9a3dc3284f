package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The DDP segments of each RDMAP message type (RFC 5040 §4, RFC 7306): the right
 * control octet, buffer model, QN and RDMAP header payload; plus a one-line trace of any segment.
 *
 * <p>Buffers: a method taking a {@code payload} hands its reference to the returned segment; a
 * method taking an allocator allocates the header payload. The caller owns the returned segment.
 * MSNs and MOs are the caller's (the engine's) to count.
 */
public final class RdmapSegments {

    private RdmapSegments() {
    }

    /** A segment of an RDMA Write (RFC 5040 §4.3): tagged, STag/TO of the Data Sink. */
    public static DdpTaggedSegment rdmaWrite(boolean last, int sinkStag, long sinkTo, ByteBuf payload) {
        return tagged(RdmapOpcode.RDMA_WRITE, last, sinkStag, sinkTo, payload);
    }

    /**
     * A segment of an RDMA Read Response (RFC 5040 §4.5): tagged, STag = the request's Data Sink STag,
     * TO = its Data Sink TO plus this segment's offset.
     */
    public static DdpTaggedSegment readResponse(boolean last, int sinkStag, long sinkTo, ByteBuf payload) {
        return tagged(RdmapOpcode.RDMA_READ_RESPONSE, last, sinkStag, sinkTo, payload);
    }

    private static DdpTaggedSegment tagged(RdmapOpcode opcode, boolean last, int stag, long to, ByteBuf payload) {
        return new DdpTaggedSegment(last, RdmapControl.encode(opcode), stag, to, payload);
    }

    /**
     * A segment of one of the four Send variants (RFC 5040 §4.6): untagged, QN 0; RsvdULP[8:39] is
     * the Invalidate STag for the "with Invalidate" variants and 0 for the others.
     *
     * @throws IllegalArgumentException for a non-Send opcode, or an Invalidate STag on a variant
     *                                  without Invalidate
     */
    public static DdpUntaggedSegment send(RdmapOpcode opcode, int invalidateStag, int msn, int mo, boolean last,
                                          ByteBuf payload) {
        checkSend(opcode, invalidateStag);
        return new DdpUntaggedSegment(last, RdmapControl.encode(opcode), invalidateStag, 0, msn, mo, payload);
    }

    /** RFC 5040 §4.6: the four Send variants, and an Invalidate STag only on those with Invalidate. */
    static void checkSend(RdmapOpcode opcode, int invalidateStag) {
        if (opcode.tagged() || opcode.queueNumber() != RdmapOpcode.Queues.SEND || opcode.singleSegment()) {
            throw new IllegalArgumentException(opcode + " is not a Send");
        }
        if (!opcode.invalidates() && invalidateStag != 0) {
            throw new IllegalArgumentException(opcode + " carries no Invalidate STag");
        }
    }

    /** A segment of a plain Send. */
    public static DdpUntaggedSegment send(int msn, int mo, boolean last, ByteBuf payload) {
        return send(RdmapOpcode.SEND, 0, msn, mo, last, payload);
    }

    /** An RDMA Read Request (RFC 5040 §4.4): untagged, QN 1, MO 0, L=1, the 28-octet header as payload. */
    public static DdpUntaggedSegment readRequest(int msn, ReadRequestHeader header, ByteBufAllocator alloc) {
        ByteBuf payload = alloc.buffer(ReadRequestHeader.LENGTH);
        header.encode(payload);
        return single(RdmapOpcode.RDMA_READ_REQUEST, msn, payload);
    }

    /** Immediate Data, or Immediate Data with SE (RFC 7306): untagged, QN 0, single segment, 8 octets. */
    public static DdpUntaggedSegment immediateData(int msn, boolean solicitedEvent, ImmediateData data,
                                                   ByteBufAllocator alloc) {
        ByteBuf payload = alloc.buffer(ImmediateData.LENGTH);
        data.encode(payload);
        return single(solicitedEvent ? RdmapOpcode.IMMEDIATE_DATA_WITH_SE : RdmapOpcode.IMMEDIATE_DATA, msn,
                payload);
    }

    /** An Atomic Request (RFC 7306): untagged, QN 1 (the Read Request queue), 52-octet header. */
    public static DdpUntaggedSegment atomicRequest(int msn, AtomicRequestHeader header, ByteBufAllocator alloc) {
        ByteBuf payload = alloc.buffer(AtomicRequestHeader.LENGTH);
        header.encode(payload);
        return single(RdmapOpcode.ATOMIC_REQUEST, msn, payload);
    }

    /** An Atomic Response (RFC 7306): untagged, QN 3, 12-octet header. */
    public static DdpUntaggedSegment atomicResponse(int msn, AtomicResponseHeader header, ByteBufAllocator alloc) {
        ByteBuf payload = alloc.buffer(AtomicResponseHeader.LENGTH);
        header.encode(payload);
        return single(RdmapOpcode.ATOMIC_RESPONSE, msn, payload);
    }

    /** A Terminate (RFC 5040 §5.4): untagged, QN 2, MSN 1, MO 0, L=1. */
    public static DdpUntaggedSegment terminate(TerminateMessage message, ByteBufAllocator alloc) {
        return message.toSegment(alloc);
    }

    private static DdpUntaggedSegment single(RdmapOpcode opcode, int msn, ByteBuf payload) {
        return new DdpUntaggedSegment(true, RdmapControl.encode(opcode), 0, opcode.queueNumber(), msn, 0, payload);
    }

    /** The message type of a segment, or {@code null} for a reserved OpCode. */
    public static RdmapOpcode opcode(DdpSegment segment) {
        return RdmapOpcode.fromValue(RdmapControl.opcode(segment.rsvdUlp()));
    }

    /**
     * A one-line trace of a segment: the message type and its fields, e.g.
     * {@code "RDMA Read Request L QN 1 MSN 1 MO 0 len 28: sink STag 0x… TO 0x… size 64 source STag 0x… TO 0x…"}.
     * Never throws on malformed input (other versions, reserved OpCodes, short headers).
     */
    public static String describe(DdpSegment segment) {
        int control = segment.rsvdUlp();
        RdmapOpcode opcode = RdmapOpcode.fromValue(RdmapControl.opcode(control));
        StringBuilder sb = new StringBuilder(128);
        sb.append(opcode == null ? String.format("reserved OpCode 0x%x", RdmapControl.opcode(control))
                : opcode.rfcName());
        if (segment.ddpVersion() != DdpSegment.VERSION_1) {
            sb.append(" DV ").append(segment.ddpVersion());
        }
        if (RdmapControl.version(control) != RdmapControl.RDMAP_VERSION_1) {
            sb.append(" RV ").append(RdmapControl.version(control));
        }
        if (segment.isLast()) {
            sb.append(" L");
        }
        ByteBuf payload = segment.content();
        int length = payload.readableBytes();
        if (segment instanceof DdpTaggedSegment) {
            DdpTaggedSegment t = (DdpTaggedSegment) segment;
            sb.append(String.format(" STag 0x%08x TO 0x%016x len %d", t.stag(), t.to(), length));
            if (opcode != null && !opcode.tagged()) {
                sb.append(" (tagged, expected untagged)");
            }
            return sb.toString();
        }
        DdpUntaggedSegment u = (DdpUntaggedSegment) segment;
        sb.append(" QN ").append(Integer.toUnsignedLong(u.qn())).append(" MSN ").append(Integer.toUnsignedLong(u.msn()))
                .append(" MO ").append(Integer.toUnsignedLong(u.mo())).append(" len ").append(length);
        if (opcode == null) {
            return sb.toString();
        }
        if (opcode.tagged()) {
            return sb.append(" (untagged, expected tagged)").toString();
        }
        if (opcode.invalidates()) {
            sb.append(String.format(" invalidate STag 0x%08x", u.rsvdUlp2()));
        }
        int index = payload.readerIndex();
        switch (opcode) {
            case RDMA_READ_REQUEST:
                return length < ReadRequestHeader.LENGTH ? short_(sb)
                        : sb.append(": ").append(ReadRequestHeader.decode(payload, index)).toString();
            case IMMEDIATE_DATA:
            case IMMEDIATE_DATA_WITH_SE:
                return length < ImmediateData.LENGTH ? short_(sb)
                        : sb.append(": ").append(ImmediateData.decode(payload, index)).toString();
            case ATOMIC_REQUEST:
                return length < AtomicRequestHeader.LENGTH ? short_(sb)
                        : sb.append(": ").append(AtomicRequestHeader.decode(payload, index)).toString();
            case ATOMIC_RESPONSE:
                return length < AtomicResponseHeader.LENGTH ? short_(sb)
                        : sb.append(": ").append(AtomicResponseHeader.decode(payload, index)).toString();
            case TERMINATE:
                return length < TerminateMessage.CONTROL_LENGTH ? short_(sb)
                        : sb.append(": ").append(TerminateMessage.decode(payload).describe()).toString();
            default:
                return sb.toString();
        }
    }

    private static String short_(StringBuilder sb) {
        return sb.append(" (too short for its RDMAP header)").toString();
    }
}
