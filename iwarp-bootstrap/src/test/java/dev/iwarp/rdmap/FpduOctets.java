package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.mpa.MpaFramer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/** Test helpers: RDMAP segments to the FPDU octets our DdpCodec and MpaFramer send, and back. */
final class FpduOctets {
    private FpduOctets() {
    }

    /** The FPDU our DdpCodec and MpaFramer send for a segment (no markers); releases the segment. */
    static byte[] fpdu(DdpSegment segment, boolean crc) {
        EmbeddedChannel ch = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 8192, false), new DdpCodec());
        try {
            ch.writeOutbound(segment);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (Object o; (o = ch.readOutbound()) != null; ) {
                ByteBuf b = (ByteBuf) o;
                out.writeBytes(ByteBufUtil.getBytes(b));
                b.release();
            }
            return out.toByteArray();
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /** The ULPDU inside one marker-free FPDU: after the 2-octet ULPDU_Length, that many octets. */
    static byte[] ulpduOfFpdu(byte[] fpdu) {
        int length = (fpdu[0] & 0xFF) << 8 | fpdu[1] & 0xFF;
        return Arrays.copyOfRange(fpdu, 2, 2 + length);
    }

    /** Decodes a ULPDU; the caller releases the segment. */
    static DdpSegment decode(byte[] ulpdu) {
        ByteBuf b = Unpooled.wrappedBuffer(ulpdu);
        try {
            return DdpCodec.decode(b);
        } finally {
            b.release();
        }
    }
}
