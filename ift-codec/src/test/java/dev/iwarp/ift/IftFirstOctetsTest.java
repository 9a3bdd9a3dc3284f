package dev.iwarp.ift;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link IftAdaptionIndication#startsWithMagic}: an IFT peer told from other framings' peers by its magic "RDDP". */
class IftFirstOctetsTest {

    private static boolean magic(String hex) {
        ByteBuf in = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(hex));
        try {
            boolean m = IftAdaptionIndication.startsWithMagic(in);
            assertEquals(0, in.readerIndex(), "reads nothing");
            return m;
        } finally {
            in.release();
        }
    }

    @Test
    void theMagicIsRecognisedAndNothingElse() {
        ByteBuf encoded = Unpooled.buffer();
        IftAdaptionIndication.builder().build().encode(encoded);
        assertTrue(IftAdaptionIndication.startsWithMagic(encoded));
        encoded.release();
        assertTrue(magic("52444450"));
        assertFalse(magic("524444"), "3 octets");
        assertFalse(magic("52444451"));
        assertFalse(magic("4d504120494420526571204672616d65"), "an MPA Request's key");
        assertFalse(magic("018500a4"), "a VI/TCP ConnectRequest");
        assertFalse(magic("16030101"), "a TLS handshake record");
    }
}
