package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import io.netty.buffer.ByteBuf;

/**
 * The untagged segment being received (RFC 5041 §4.3): its header fields, read in place from its ULPDU
 * or taken from a {@link DdpUntaggedSegment}, and its payload from the payload buffer's reader index on.
 * One per engine, filled again for every untagged segment: no object per Send or Read Request.
 * Valid only while that segment is processed; confined to the stream's event loop.
 */
final class InboundUntagged {
    boolean last;
    int rsvdUlp;
    int rsvdUlp2;
    int qn;
    int msn;
    int mo;
    ByteBuf payload;

    /** Fills this from the untagged ULPDU whose header starts at its reader index; the payload follows it. */
    InboundUntagged read(ByteBuf ulpdu) {
        int at = ulpdu.readerIndex();
        header(ulpdu, at);
        payload = ulpdu.readerIndex(at + DdpUntaggedSegment.HEADER_LENGTH);
        return this;
    }

    /** Fills the header fields from the untagged header at {@code at} of {@code ulpdu} (indices unchanged); no payload. */
    InboundUntagged header(ByteBuf ulpdu, int at) {
        last = (ulpdu.getUnsignedByte(at) & DdpSegment.FLAG_LAST) != 0;
        rsvdUlp = ulpdu.getUnsignedByte(at + 1);
        rsvdUlp2 = DdpUntaggedSegment.rsvdUlp2(ulpdu, at);
        qn = DdpUntaggedSegment.qn(ulpdu, at);
        msn = DdpUntaggedSegment.msn(ulpdu, at);
        mo = DdpUntaggedSegment.mo(ulpdu, at);
        payload = null;
        return this;
    }

    /** Fills this from {@code u}, whose payload it reads (the caller keeps its reference). */
    InboundUntagged of(DdpUntaggedSegment u) {
        last = u.isLast();
        rsvdUlp = u.rsvdUlp();
        rsvdUlp2 = u.rsvdUlp2();
        qn = u.qn();
        msn = u.msn();
        mo = u.mo();
        payload = u.payload();
        return this;
    }

    int payloadLength() {
        return payload.readableBytes();
    }

    /** Forgets the payload once the segment has been processed. */
    void clear() {
        payload = null;
    }
}
