package dev.iwarp.ddp;

import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LowerLayer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageCodec;

import java.util.List;
import java.util.Map;

/**
 * ULPDU ({@link ByteBuf}, one per MPA FPDU, IFT frame, SCTP message or other framing unit) to {@link DdpSegment} and back
 * (RFC 5041 §4). Decoding checks only what the header format defines (the ULPDU holds the header
 * its T bit announces); versions, STags, queues and offsets are the engine's to judge. In the
 * pipeline the decoded payload is the ULPDU itself, retained, its reader index past the header
 * (read it from its reader index on, as every holder of a segment does); the static
 * {@link #decode(ByteBuf)} returns a retained slice; the encoded ULPDU is a composite of a small header
 * buffer and the segment's payload, so payload octets are never copied. Below a lower layer that
 * {@linkplain LowerLayer#takesSegments() takes segments} itself (MPA without markers), outbound
 * segments pass down unencoded: the framer writes the header octets and the payload without a
 * composite per segment (issue 13). Symmetrically, once an engine directly above asks for it
 * ({@link #passUlpdusUp()}), ULPDUs pass up undecoded, their header length checked: no segment object
 * per incoming segment.
 */
public class DdpCodec extends MessageToMessageCodec<ByteBuf, DdpSegment> {
    /** Set once a lower layer that takes segments itself started ({@link LowerLayer#takesSegments()}). */
    private boolean segmentsPassDown;
    /** Set by {@link #passUlpdusUp()}. */
    private boolean ulpdusPassUp;

    @Override
    public boolean acceptOutboundMessage(Object msg) throws Exception {
        return !segmentsPassDown && super.acceptOutboundMessage(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof LlpStartupEvent) {
            LlpStartupEvent e = (LlpStartupEvent) evt;
            segmentsPassDown = e.isSuccess() && e.lowerLayer() != null && e.lowerLayer().takesSegments();
        }
        super.userEventTriggered(ctx, evt);
    }

    /** Whether outbound segments go down unencoded, to a lower layer that frames them itself. */
    public boolean passesSegmentsDown() {
        return segmentsPassDown;
    }

    /**
     * From now on every ULPDU passes up as the ULPDU buffer itself, retained, its reader index at the DDP
     * header, once this codec has checked that it holds the header its T bit announces (RFC 5041 §4).
     * For an engine directly above this codec that reads headers in place (issue 13); a handler between
     * the two would see those buffers instead of segments. Call it on the channel's event loop.
     */
    public void passUlpdusUp() {
        ulpdusPassUp = true;
    }

    /** Whether ULPDUs pass up undecoded ({@link #passUlpdusUp()}). */
    public boolean passesUlpdusUp() {
        return ulpdusPassUp;
    }

    /**
     * Whether every handler of type {@code kind} strictly between {@code lower} (nearer the head) and
     * {@code upper} in their pipeline is a {@code DdpCodec}: nothing else of that direction sees what passes
     * between them. For an engine and a lower layer that hand each other ULPDUs or messages in place of
     * segments ({@link #passUlpdusUp()}, {@link LowerLayer#takesMessagesFrom}).
     */
    public static boolean onlyCodecBetween(ChannelHandlerContext lower, ChannelHandlerContext upper,
                                           Class<? extends ChannelHandler> kind) {
        boolean between = false;
        for (Map.Entry<String, ChannelHandler> e : lower.pipeline()) { // from the head to the tail
            ChannelHandler h = e.getValue();
            if (h == lower.handler()) {
                between = true;
            } else if (h == upper.handler()) {
                return between;
            } else if (between && kind.isInstance(h) && !(h instanceof DdpCodec)) {
                return false;
            }
        }
        return false;
    }

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

    /**
     * Once ULPDUs pass up, each goes on as it came, with the reference it came with: the decoder's path
     * took a second reference for its output and dropped the first, two atomic updates and an output list
     * per ULPDU (issue 13).
     */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (ulpdusPassUp && msg instanceof ByteBuf) {
            try {
                headerLength((ByteBuf) msg);
            } catch (DdpException e) {
                ((ByteBuf) msg).release();
                throw e;
            }
            ctx.fireChannelRead(msg);
            return;
        }
        super.channelRead(ctx, msg);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf ulpdu, List<Object> out) {
        // the ULPDU (a slice the framer made for this segment alone) becomes the payload itself, its
        // reader index past the header: no second slice per segment (issue 13)
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
    private static int headerLength(ByteBuf ulpdu) {
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
