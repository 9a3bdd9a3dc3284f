package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.EncoderException;
import io.netty.handler.codec.MessageToMessageEncoder;

import java.util.List;

/**
 * {@link ViSegment} to bytes. Headers go into one small pooled buffer; the payload is appended to a composite
 * buffer as a retained slice (no copy), followed by the trailer CRC when one is due (§3.5).
 *
 * <p>Ownership: the encoder releases the segment it is given; the output buffer owns a retained reference to the
 * payload.
 */
public class VitcpSegmentEncoder extends MessageToMessageEncoder<ViSegment> {

    private final VitcpCrcMode crcMode;
    private boolean crcEnabled;

    public VitcpSegmentEncoder(VitcpCrcMode crcMode) {
        super(ViSegment.class);
        this.crcMode = crcMode;
    }

    public void crcEnabled(boolean enabled) {
        this.crcEnabled = enabled;
    }

    public boolean crcEnabled() {
        return crcEnabled;
    }

    /** Whether a segment of this kind is written with a trailer. draft-dicecco-vitcp-01 §3.5, §3.6. */
    public static boolean hasTrailer(ViSegment s, boolean crcEnabled) {
        if (s.type().carriesCeHeader()) {
            return s.ceHeader().crcOption();
        }
        if (s.type().optionalTrailer()) {
            return s.trailer();
        }
        return crcEnabled;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, ViSegment s, List<Object> out) {
        int segmentLength = s.segmentLength();
        if (segmentLength > 0xFFFF) {
            throw new EncoderException("Segment Length " + segmentLength + " does not fit 16 bits: " + s);
        }
        boolean trailer = hasTrailer(s, crcEnabled);
        ByteBuf payload = s.content();
        int payloadLength = payload.readableBytes();
        ByteBuf head = ctx.alloc().buffer(s.headersLength() + ViSegment.TRAILER_LENGTH);
        try {
            writeHeaders(s, segmentLength, head);
            if (!trailer) {
                if (payloadLength == 0) {
                    out.add(head);
                } else {
                    CompositeByteBuf c = ctx.alloc().compositeBuffer(2);
                    c.addComponent(true, head);
                    c.addComponent(true, payload.retainedSlice());
                    out.add(c);
                }
                head = null;
                return;
            }
            int register = VitcpCrc.update(crcMode, VitcpCrc.INITIAL, head, head.readerIndex(), head.readableBytes());
            register = VitcpCrc.update(crcMode, register, payload, payload.readerIndex(), payloadLength);
            int crc = VitcpCrc.finish(register);
            if (payloadLength == 0) {
                VitcpCrc.writeCrc(crcMode, crc, head);
                out.add(head);
            } else {
                ByteBuf tail = ctx.alloc().buffer(ViSegment.TRAILER_LENGTH);
                VitcpCrc.writeCrc(crcMode, crc, tail);
                CompositeByteBuf c = ctx.alloc().compositeBuffer(3);
                c.addComponent(true, head);
                c.addComponent(true, payload.retainedSlice());
                c.addComponent(true, tail);
                out.add(c);
            }
            head = null;
        } finally {
            if (head != null) {
                head.release();
            }
        }
    }

    /** Writes the VI Segment Header, RDMA Header and CE Header. draft-dicecco-vitcp-01 §3.2-§3.4. */
    static void writeHeaders(ViSegment s, int segmentLength, ByteBuf out) {
        out.writeByte(s.version());
        out.writeByte(s.typeFlagsOctet());
        out.writeShort(segmentLength);
        out.writeInt(s.dataOffset());
        out.writeInt(s.immediateData());
        out.writeInt(s.messageNumber());
        out.writeInt(s.messageAck());
        out.writeShort(s.rxDescriptorsPosted());
        out.writeShort(s.remoteErrorCode());
        ViRdmaHeader r = s.rdmaHeader();
        if (r != null) {
            out.writeLong(r.rdmaAddress());
            out.writeInt(r.memoryHandle());
            out.writeInt(r.rdmaLength());
        }
        ViCeHeader ce = s.ceHeader();
        if (ce != null) {
            writeCeHeader(ce, out);
        }
    }

    static void writeCeHeader(ViCeHeader ce, ByteBuf out) {
        byte[] calling = ce.callingDiscriminatorUnsafe();
        byte[] called = ce.calledDiscriminatorUnsafe();
        out.writeShort(ce.callingAttributes());
        out.writeShort(calling.length);
        out.writeInt((int) ce.mtuSize());
        out.writeBytes(calling);
        out.writeZero(ViCeHeader.MAX_DISCRIMINATOR_LENGTH - calling.length);
        out.writeShort(ce.rdmaReadWindow());
        out.writeShort(called.length);
        out.writeBytes(called);
        out.writeZero(ViCeHeader.MAX_DISCRIMINATOR_LENGTH - called.length);
        for (ViCeOption o : ce.options()) {
            out.writeShort(o.type());
            out.writeShort(o.length());
            out.writeZero(o.length() - 4);
        }
        if (ce.endOfOptionList()) {
            out.writeShort(ViCeOption.END_OF_OPTION_LIST);
        }
    }
}
