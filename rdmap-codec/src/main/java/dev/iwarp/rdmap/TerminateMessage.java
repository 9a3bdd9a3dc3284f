package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpException;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.CorruptedFrameException;

import java.util.Arrays;
import java.util.Objects;

/**
 * The RDMAP data of a Terminate message (RFC 5040 §4.7): everything after the untagged DDP header
 * (QN 2, MSN 1, MO 0).
 * <pre>
 *  | Layer(4) | EType(4) | Error Code(8) | M | D | R | Reserved(13) |
 *  | DDP Segment Length(16)                  -- if M or D
 *  | Terminated DDP Header (14 / 18)         -- if D
 *  | Terminated RDMA Header (28)             -- if R
 * </pre>
 * Immutable. {@link #forError} builds what we send; {@link #decode} reads what a peer sent, keeping
 * the raw octets so that a Linux siw Terminate, whose control word is in a non-RFC bit order
 * (siw's iwarp.h bitfields), can be reread with {@link #asSiwOrder()}. A received Terminate serves
 * diagnostics only: the stream closes either way (RFC 5040 §5.4).
 */
public final class TerminateMessage {
    /** Octets of the control word (Layer, EType, Error Code, flags, reserved). */
    public static final int CONTROL_LENGTH = 4;
    /** Octets of the DDP Segment Length field. */
    public static final int SEGMENT_LENGTH_FIELD = 2;
    /** Largest RDMAP data of a Terminate: control, length, untagged DDP header, Read Request header. */
    public static final int MAX_LENGTH = CONTROL_LENGTH + SEGMENT_LENGTH_FIELD + DdpUntaggedSegment.HEADER_LENGTH
            + ReadRequestHeader.LENGTH;
    /** The MSN of the only Terminate a stream carries (RFC 5040 §5.4). */
    public static final int MSN = 1;

    // RFC 5040 §4.7: octet 2 of the control word
    private static final int FLAG_M = 0x80;
    private static final int FLAG_D = 0x40;
    private static final int FLAG_R = 0x20;
    // siw's iwarp.h: where its little-endian bitfields put M, D, R
    private static final int SIW_FLAG_M = 0x01;
    private static final int SIW_FLAG_D = 0x02;
    private static final int SIW_FLAG_R = 0x04;

    private final TerminateCause cause;
    private final boolean m;
    private final boolean d;
    private final boolean r;
    private final int ddpSegmentLength;
    private final byte[] terminatedDdpHeader;
    private final ReadRequestHeader terminatedRdmaHeader;
    private final int control;
    private final byte[] raw;
    private final int receivedLength;

    private TerminateMessage(TerminateCause cause, boolean m, boolean d, boolean r, int ddpSegmentLength,
                             byte[] terminatedDdpHeader, ReadRequestHeader terminatedRdmaHeader, int control,
                             byte[] raw, int receivedLength) {
        this.cause = cause;
        this.m = m;
        this.d = d;
        this.r = r;
        this.ddpSegmentLength = ddpSegmentLength;
        this.terminatedDdpHeader = terminatedDdpHeader;
        this.terminatedRdmaHeader = terminatedRdmaHeader;
        this.control = control;
        this.raw = raw;
        this.receivedLength = receivedLength;
    }

    private static TerminateMessage build(TerminateCause cause, int ddpSegmentLength, byte[] ddpHeader,
                                          ReadRequestHeader rdmaHeader) {
        boolean m = ddpSegmentLength >= 0;
        boolean d = ddpHeader != null;
        boolean r = rdmaHeader != null;
        int control = cause.layer() << 28 | cause.errorType() << 24 | cause.errorCode() << 16
                | (m ? FLAG_M : 0) << 8 | (d ? FLAG_D : 0) << 8 | (r ? FLAG_R : 0) << 8;
        TerminateMessage unencoded = new TerminateMessage(cause, m, d, r, m ? ddpSegmentLength : -1, ddpHeader,
                rdmaHeader, control, null, 0);
        byte[] raw = new byte[unencoded.encodedLength()];
        unencoded.encode(Unpooled.wrappedBuffer(raw).clear());
        return new TerminateMessage(cause, m, d, r, m ? ddpSegmentLength : -1, ddpHeader, rdmaHeader, control,
                raw, raw.length);
    }

    /**
     * The Terminate for an error, with the headers the table of RFC 5040 §4.7 asks for (RFC 5040
     * §4.7): the offending segment's length (M) and DDP header (D) unless the cause
     * {@linkplain TerminateCause#carriesDdpHeader() excludes them}, and the Read Request header (R)
     * only for an RDMAP Remote Protection error on an RDMA Read Request. Arguments the table does
     * not ask for are left out.
     *
     * <p>The DDP Segment Length sent is the whole offending DDP segment, header and payload (our
     * reading of RFC 5040 §4.7; siw sends the payload length).
     *
     * @param offendingSegment the segment that failed, or {@code null} when there is none (not
     *                         released; its payload is read only to find a Read Request header)
     * @param readRequest      the offending Read Request's header, or {@code null}: then taken from
     *                         the offending segment when that is an RDMA Read Request
     */
    public static TerminateMessage forError(TerminateCause cause, DdpSegment offendingSegment,
                                            ReadRequestHeader readRequest) {
        Objects.requireNonNull(cause, "cause");
        if (offendingSegment == null || !cause.carriesDdpHeader()) {
            return forError(cause, null, -1, readRequest);
        }
        if (readRequest == null && cause.mayCarryRdmaHeader() && !offendingSegment.isTagged()
                && RdmapControl.opcode(offendingSegment.rsvdUlp()) == RdmapOpcode.RDMA_READ_REQUEST.value()
                && offendingSegment.payloadLength() >= ReadRequestHeader.LENGTH) {
            readRequest = ReadRequestHeader.decode(offendingSegment.content(), offendingSegment.content().readerIndex());
        }
        byte[] header = new byte[offendingSegment.headerLength()];
        offendingSegment.encodeHeader(Unpooled.wrappedBuffer(header).clear());
        return forError(cause, header, offendingSegment.headerLength() + offendingSegment.payloadLength(),
                readRequest);
    }

    /**
     * As {@link #forError(TerminateCause, DdpSegment, ReadRequestHeader)}, from the offending header's
     * octets.
     *
     * @param ddpHeader        the offending DDP header (14 octets with T=1, or 18 with T=0), or {@code null}
     * @param ddpSegmentLength length of the offending DDP segment (0..65535; larger values are sent
     *                         as 65535), or -1 when unknown (M=0)
     */
    public static TerminateMessage forError(TerminateCause cause, byte[] ddpHeader, int ddpSegmentLength,
                                            ReadRequestHeader readRequest) {
        Objects.requireNonNull(cause, "cause");
        if (ddpHeader != null && ddpHeader.length != ddpHeaderLength(ddpHeader[0])) {
            throw new IllegalArgumentException("a DDP header with T=" + ((ddpHeader[0] & 0x80) >>> 7) + " is "
                    + ddpHeaderLength(ddpHeader[0]) + " octets, not " + ddpHeader.length);
        }
        if (!cause.carriesDdpHeader()) {
            return build(cause, -1, null, null);
        }
        int length = ddpSegmentLength < 0 ? -1 : Math.min(ddpSegmentLength, 0xFFFF);
        byte[] header = ddpHeader == null ? null : ddpHeader.clone();
        return build(cause, header == null ? -1 : length, header,
                cause.mayCarryRdmaHeader() ? readRequest : null);
    }

    /** The Terminate for a DDP error detected at the Data Sink (RFC 5041 §7.1). */
    public static TerminateMessage forDdpException(DdpException e) {
        byte[] header = e.ddpHeader();
        int length = header == null || e.segmentLength() < 0 ? -1 : header.length + e.segmentLength();
        return forError(TerminateCause.of(e.error()), header, length, null);
    }

    private static int ddpHeaderLength(byte control) {
        return (control & DdpSegment.FLAG_TAGGED) != 0 ? DdpTaggedSegment.HEADER_LENGTH
                : DdpUntaggedSegment.HEADER_LENGTH;
    }

    /**
     * Reads a Terminate's RDMAP data (the DDP payload, reader to writer index; the indices are left
     * alone) per RFC 5040 §4.7. Lenient, as befits diagnostics: a field whose flag is set but whose
     * octets are missing is absent (siw sets R after a Send with Invalidate without appending a
     * header, RFC 5040 §4.7); octets beyond {@link #MAX_LENGTH} are ignored.
     *
     * @throws CorruptedFrameException when fewer than the 4 octets of the control word are present
     */
    public static TerminateMessage decode(ByteBuf payload) {
        return parse(received(payload), payload.readableBytes(), false);
    }

    /** Reads a Terminate's RDMAP data as Linux siw on a little-endian host lays it out (siw's iwarp.h bitfields). */
    public static TerminateMessage decodeSiwOrder(ByteBuf payload) {
        return parse(received(payload), payload.readableBytes(), true);
    }

    private static byte[] received(ByteBuf payload) {
        if (payload.readableBytes() < CONTROL_LENGTH) {
            throw new CorruptedFrameException("Terminate of " + payload.readableBytes()
                    + " octets has no 4-octet control word");
        }
        return ByteBufUtil.getBytes(payload, payload.readerIndex(), Math.min(payload.readableBytes(), MAX_LENGTH));
    }

    private static TerminateMessage parse(byte[] raw, int receivedLength, boolean siwOrder) {
        int octet0 = raw[0] & 0xFF;
        int octet2 = raw[2] & 0xFF;
        TerminateCause cause = siwOrder
                ? new TerminateCause(octet0 & 0x0F, octet0 >>> 4, raw[1] & 0xFF)
                : new TerminateCause(octet0 >>> 4, octet0 & 0x0F, raw[1] & 0xFF);
        boolean m = (octet2 & (siwOrder ? SIW_FLAG_M : FLAG_M)) != 0;
        boolean d = (octet2 & (siwOrder ? SIW_FLAG_D : FLAG_D)) != 0;
        boolean r = (octet2 & (siwOrder ? SIW_FLAG_R : FLAG_R)) != 0;
        int pos = CONTROL_LENGTH;
        int segmentLength = -1;
        if ((m || d) && pos + SEGMENT_LENGTH_FIELD <= raw.length) {
            segmentLength = (raw[pos] & 0xFF) << 8 | raw[pos + 1] & 0xFF;
            pos += SEGMENT_LENGTH_FIELD;
        }
        byte[] ddpHeader = null;
        if (d && pos < raw.length && pos + ddpHeaderLength(raw[pos]) <= raw.length) {
            ddpHeader = Arrays.copyOfRange(raw, pos, pos + ddpHeaderLength(raw[pos]));
            pos += ddpHeader.length;
        }
        ReadRequestHeader rdmaHeader = null;
        if (r && pos + ReadRequestHeader.LENGTH <= raw.length) {
            rdmaHeader = ReadRequestHeader.decode(Unpooled.wrappedBuffer(raw), pos);
        }
        int control = (raw[0] & 0xFF) << 24 | (raw[1] & 0xFF) << 16 | octet2 << 8 | raw[3] & 0xFF;
        return new TerminateMessage(cause, m, d, r, m ? segmentLength : -1, ddpHeader, rdmaHeader, control, raw,
                receivedLength);
    }

    /** Layer, EType and Error Code. */
    public TerminateCause cause() {
        return cause;
    }

    /** M: the DDP Segment Length is valid. */
    public boolean m() {
        return m;
    }

    /** D: the Terminated DDP Header is present. */
    public boolean d() {
        return d;
    }

    /** R: the Terminated RDMA Header is present. */
    public boolean r() {
        return r;
    }

    /** DDP Segment Length, or -1 when M=0 (or the field is missing). */
    public int ddpSegmentLength() {
        return ddpSegmentLength;
    }

    /** A copy of the Terminated DDP Header (14 or 18 octets), or {@code null}. */
    public byte[] terminatedDdpHeader() {
        return terminatedDdpHeader == null ? null : terminatedDdpHeader.clone();
    }

    /** The Terminated RDMA Header (an RDMA Read Request header), or {@code null}. */
    public ReadRequestHeader terminatedRdmaHeader() {
        return terminatedRdmaHeader;
    }

    /** The control word's 4 octets as received (or as we encode them), big-endian. */
    public int rawControl() {
        return control;
    }

    /**
     * Whether the control word looks like Linux siw's non-RFC bit order (siw's iwarp.h bitfields): octet 2 has
     * some of siw's flag bits (0x07) and none of the RFC's (0xE0); or, with no flag bits at all, the
     * RFC reading is an unregistered cause while the nibble-swapped reading is a registered one (siw's
     * flagless Terminates, e.g. {@code 02 02 00 00} for an MPA CRC error).
     */
    public boolean siwByteOrderSuspected() {
        int octet2 = control >>> 8 & 0xFF;
        if ((octet2 & 0xE0) != 0) {
            return false;
        }
        if ((octet2 & 0x07) != 0) {
            return true;
        }
        int octet0 = control >>> 24;
        return !new TerminateCause(octet0 >>> 4, octet0 & 0x0F, control >>> 16 & 0xFF).registered()
                && new TerminateCause(octet0 & 0x0F, octet0 >>> 4, control >>> 16 & 0xFF).registered();
    }

    /** The same octets reread in siw's bit order (siw's iwarp.h bitfields). */
    public TerminateMessage asSiwOrder() {
        return parse(raw, receivedLength, true);
    }

    /**
     * This Terminate as its sender most likely meant it: {@link #asSiwOrder()} when
     * {@link #siwByteOrderSuspected()}, else itself (RFC 5040 §4.8 order).
     */
    public TerminateMessage interpreted() {
        return siwByteOrderSuspected() ? asSiwOrder() : this;
    }

    /** Octets {@link #encode} writes. */
    public int encodedLength() {
        return CONTROL_LENGTH + (m || d ? SEGMENT_LENGTH_FIELD : 0)
                + (terminatedDdpHeader == null ? 0 : terminatedDdpHeader.length)
                + (terminatedRdmaHeader == null ? 0 : ReadRequestHeader.LENGTH);
    }

    /** Writes the RDMAP data in RFC 5040 §4.7 bit order at the writer index of {@code out}. */
    public void encode(ByteBuf out) {
        out.writeByte(cause.layer() << 4 | cause.errorType());
        out.writeByte(cause.errorCode());
        out.writeByte((m ? FLAG_M : 0) | (terminatedDdpHeader != null ? FLAG_D : 0)
                | (terminatedRdmaHeader != null ? FLAG_R : 0));
        out.writeByte(0);
        if (m || d) {
            out.writeShort(m ? ddpSegmentLength : 0);
        }
        if (terminatedDdpHeader != null) {
            out.writeBytes(terminatedDdpHeader);
        }
        if (terminatedRdmaHeader != null) {
            terminatedRdmaHeader.encode(out);
        }
    }

    /**
     * The whole Terminate as a DDP segment (RFC 5040 §5.4): untagged, QN 2, MSN 1, MO 0, L=1,
     * RsvdULP = RV 1 / OpCode 7, RsvdULP[8:39] = 0. The caller owns the returned segment.
     */
    public DdpUntaggedSegment toSegment(ByteBufAllocator alloc) {
        return toSegment(alloc, RdmapControl.RDMAP_VERSION_1);
    }

    /**
     * As {@link #toSegment(ByteBufAllocator)} for a stream of the given version: DV and RV 0 on an
     * RDMAC stream (MPA Rev 0), where the Terminate goes out with the version of the data.
     */
    public DdpUntaggedSegment toSegment(ByteBufAllocator alloc, int version) {
        ByteBuf payload = alloc.buffer(encodedLength());
        encode(payload);
        return new DdpUntaggedSegment(true, version, RdmapControl.encode(version, RdmapOpcode.TERMINATE), 0,
                RdmapOpcode.TERMINATE.queueNumber(), MSN, 0, payload);
    }

    /**
     * One line for logs: the cause, flags, raw control word and the headers. When the octets look like
     * siw's bit order, the siw reading comes first (it is what the peer meant) and the RFC 5040 §4.8
     * reading follows.
     */
    public String describe() {
        StringBuilder sb = new StringBuilder("Terminate ");
        if (siwByteOrderSuspected()) {
            sb.append("(siw bit order) ");
            asSiwOrder().body(sb);
            sb.append("; in RFC order it would read ");
        }
        body(sb);
        return sb.toString();
    }

    private void body(StringBuilder sb) {
        sb.append(cause.describe()).append(" [raw ").append(String.format("%08x", control)).append(']');
        sb.append(m ? " M" : "").append(d ? " D" : "").append(r ? " R" : "");
        if (ddpSegmentLength >= 0) {
            sb.append(" DDP segment length ").append(ddpSegmentLength);
        }
        if (terminatedDdpHeader != null) {
            sb.append(" DDP header ").append(ByteBufUtil.hexDump(terminatedDdpHeader));
        } else if (d) {
            sb.append(" (DDP header missing)");
        }
        if (terminatedRdmaHeader != null) {
            sb.append(" Read Request {").append(terminatedRdmaHeader).append('}');
        } else if (r) {
            sb.append(" (RDMA header missing)");
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TerminateMessage)) {
            return false;
        }
        TerminateMessage t = (TerminateMessage) o;
        return cause.equals(t.cause) && m == t.m && d == t.d && r == t.r && ddpSegmentLength == t.ddpSegmentLength
                && Arrays.equals(terminatedDdpHeader, t.terminatedDdpHeader)
                && Objects.equals(terminatedRdmaHeader, t.terminatedRdmaHeader);
    }

    @Override
    public int hashCode() {
        return Objects.hash(cause, m, d, r, ddpSegmentLength, Arrays.hashCode(terminatedDdpHeader),
                terminatedRdmaHeader);
    }

    @Override
    public String toString() {
        return describe();
    }
}
