package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageCodec;

import java.util.List;

/**
 * ULPDU ({@link ByteBuf}, one per MPA FPDU, IFT frame, SCTP message or other framing unit) to {@link DdpSegment} and back
 * (RFC 5041 §4). Decoding checks only what the header format defines (the ULPDU holds the header
 * its T bit announces); versions, STags, queues and offsets are the engine's to judge. In the
 * pipeline the decoded payload is the ULPDU itself, retained, its reader index past the header
 * (read it from its reader index on, as every holder of a segment does); the static
 * {@link #decode(ByteBuf)} returns a retained slice; the encoded ULPDU is a composite of a small header
 * buffer and the segment's payload, so payload octets are never copied. An optional codec, for users, tools
 * and tests that want DDP segments as messages: the RDMA engine does not need it (it writes through
 * {@link dev.iwarp.ddp.llp.UlpduWriter} and receives through {@link dev.iwarp.ddp.llp.UlpduReceiver}).
 */
public class DdpCodec extends MessageToMessageCodec<ByteBuf, DdpSegment> {

    @Override
    protected void encode(ChannelHandlerContext ctx, DdpSegment segment, List<Object> out) {
        out.add(encode(segment, ctx.alloc()));
    }

    /**
     * The ULPDU of one segment: its header followed by its payload (a composite holding its own
     * reference to the payload; no copy). The caller keeps its reference to {@code segment} and owns
     * the returned buffer.
     */
    public static ByteBuf encode(DdpSegment segment, ByteBufAllocator alloc) {
        ByteBuf header = alloc.buffer(segment.headerLength());
        segment.encodeHeader(header);
        if (segment.payloadLength() == 0) {
            return header;
        }
        CompositeByteBuf ulpdu = alloc.compositeBuffer(2);
        ulpdu.addComponents(true, header, segment.content().retain());
        return ulpdu;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf ulpdu, List<Object> out) {
        // the ULPDU (a slice the framer made for this segment alone) becomes the payload itself, its
        // reader index past the header: no second slice per segment
        out.add(decode(ulpdu, true));
    }

    /**
     * Decodes one ULPDU; the returned segment holds a retained slice of it (the caller keeps its own
     * reference to {@code ulpdu}).
     *
     * @throws DdpException when the ULPDU is shorter than the header its T bit announces
     */
    public static DdpSegment decode(ByteBuf ulpdu) {
        return decode(ulpdu, false);
    }

    /** As {@link #decode(ByteBuf)}; with {@code inPlace} the payload is {@code ulpdu} itself, retained, read past the header. */
    private static DdpSegment decode(ByteBuf ulpdu, boolean inPlace) {
        int headerLength = headerLength(ulpdu);
        boolean tagged = headerLength == DdpTaggedSegment.HEADER_LENGTH;
        int start = ulpdu.readerIndex();
        int length = ulpdu.readableBytes();
        int control = ulpdu.getUnsignedByte(start);
        boolean last = (control & DdpSegment.FLAG_LAST) != 0;
        int version = control & DdpSegment.VERSION_MASK;
        int rsvdUlp = ulpdu.getUnsignedByte(start + 1);
        ByteBuf payload = inPlace ? ulpdu.retain().readerIndex(start + headerLength)
                : ulpdu.retainedSlice(start + headerLength, length - headerLength);
        if (tagged) {
            return new DdpTaggedSegment(last, version, rsvdUlp, DdpTaggedSegment.stag(ulpdu, start),
                    DdpTaggedSegment.to(ulpdu, start), payload);
        }
        return new DdpUntaggedSegment(last, version, rsvdUlp, DdpUntaggedSegment.rsvdUlp2(ulpdu, start),
                DdpUntaggedSegment.qn(ulpdu, start), DdpUntaggedSegment.msn(ulpdu, start),
                DdpUntaggedSegment.mo(ulpdu, start), payload);
    }

    /**
     * The length of the DDP header the ULPDU's T bit announces (RFC 5041 §4.2, §4.3).
     *
     * @throws DdpException when the ULPDU is too short to hold it
     */
    public static int headerLength(ByteBuf ulpdu) {
        int start = ulpdu.readerIndex();
        int length = ulpdu.readableBytes();
        if (length < 1) {
            throw new DdpException(DdpError.LOCAL_CATASTROPHIC, "empty ULPDU: no DDP header", null, -1);
        }
        boolean tagged = (ulpdu.getUnsignedByte(start) & DdpSegment.FLAG_TAGGED) != 0;
        int headerLength = tagged ? DdpTaggedSegment.HEADER_LENGTH : DdpUntaggedSegment.HEADER_LENGTH;
        if (length < headerLength) {
            throw new DdpException(DdpError.LOCAL_CATASTROPHIC, "ULPDU of " + length + " octets cannot hold the "
                    + headerLength + "-octet " + (tagged ? "tagged" : "untagged") + " DDP header: "
                    + ByteBufUtil.hexDump(ulpdu, start, length), null, -1);
        }
        return headerLength;
    }
}
