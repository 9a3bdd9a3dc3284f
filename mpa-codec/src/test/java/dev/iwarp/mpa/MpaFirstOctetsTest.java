package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** {@link MpaStartupFrame#keyAt}: an MPA peer told from other framings' peers by its first 16 octets (RFC 5044 §7.1.1). */
class MpaFirstOctetsTest {

    private static MpaStartupFrame.Type keyAt(ByteBuf in) {
        try {
            int before = in.readerIndex();
            MpaStartupFrame.Type t = MpaStartupFrame.keyAt(in);
            assertEquals(before, in.readerIndex(), "reads nothing");
            return t;
        } finally {
            in.release();
        }
    }

    @Test
    void theTwoKeysAreRecognisedAndNothingElse() {
        assertEquals(MpaStartupFrame.Type.REQUEST, keyAt(Unpooled.copiedBuffer("MPA ID Req Frame\u0010\u0000\u0000\u0000",
                StandardCharsets.US_ASCII)));
        assertEquals(MpaStartupFrame.Type.REPLY, keyAt(Unpooled.copiedBuffer("MPA ID Rep Frame",
                StandardCharsets.US_ASCII)));
        assertNull(keyAt(Unpooled.copiedBuffer("MPA ID Req Fram", StandardCharsets.US_ASCII)), "15 octets");
        assertNull(keyAt(Unpooled.copiedBuffer("MPA ID Rex Frame", StandardCharsets.US_ASCII)));
        // a VI/TCP ConnectRequest (draft-dicecco-vitcp-01 §3.2), an IFT indication's magic, a TLS ClientHello record
        assertNull(keyAt(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("018500a4000000000000000000000000"))));
        assertNull(keyAt(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("524444500001000170000000b7450000"))));
        assertNull(keyAt(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("160301010f0100010b0303adc412dda7"))));
    }
}
