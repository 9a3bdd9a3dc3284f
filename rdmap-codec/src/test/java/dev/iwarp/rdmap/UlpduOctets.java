package dev.iwarp.rdmap;

import dev.iwarp.ddp.DdpSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

import java.util.Arrays;

/** Test helper: a segment's ULPDU octets. */
final class UlpduOctets {
    private UlpduOctets() {
    }

    /** The ULPDU octets of a segment (header + payload); releases the segment. */
    static byte[] ulpdu(DdpSegment segment) {
        try {
            ByteBuf header = Unpooled.buffer(segment.headerLength());
            segment.encodeHeader(header);
            byte[] h = ByteBufUtil.getBytes(header);
            byte[] p = ByteBufUtil.getBytes(segment.content());
            byte[] all = Arrays.copyOf(h, h.length + p.length);
            System.arraycopy(p, 0, all, h.length, p.length);
            return all;
        } finally {
            segment.release();
        }
    }
}
