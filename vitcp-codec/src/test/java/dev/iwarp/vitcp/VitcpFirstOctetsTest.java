package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@link ViSegment#connectionSegmentAt}: a VI/TCP peer told from other framings' peers by its first segment's fixed
 * header (draft-dicecco-vitcp-01 §3.2).
 */
class VitcpFirstOctetsTest {

    private static ViSegmentType at(String hex) {
        ByteBuf in = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(hex));
        try {
            ViSegmentType t = ViSegment.connectionSegmentAt(in);
            assertEquals(0, in.readerIndex(), "reads nothing");
            return t;
        } finally {
            in.release();
        }
    }

    @Test
    void connectionManagementSegmentsAreRecognisedAndNothingElse() {
        // a ConnectRequest as ping --wire vitcp sends it: Version 1, EOM + type 5, 24 + 140 octets
        assertEquals(ViSegmentType.CONNECT_REQUEST, at("018500a4"));
        assertEquals(ViSegmentType.CONNECT_REJECT, at("01870018"));
        assertEquals(ViSegmentType.CONNECT_NO_MATCH, at("0108001c"));
        assertNull(at("018500"), "3 octets");
        assertNull(at("01850018"), "a ConnectRequest too short for its CE Header");
        assertNull(at("01870020"), "a ConnectReject with a payload");
        assertNull(at("01800018"), "a Send");
        assertNull(at("028500a4"), "version 2");
        assertNull(at("4d504120"), "an MPA key");
        assertNull(at("52444450"), "IFT's magic");
        assertNull(at("16030101"), "a TLS record");
    }

    @Test
    void theEncodersConnectRejectIsRecognised() {
        EmbeddedChannel ch = new EmbeddedChannel(new VitcpCodec());
        ch.writeOutbound(ViSegment.builder(ViSegmentType.CONNECT_REJECT).endOfMessage(true).build());
        ByteBuf out = ch.readOutbound();
        try {
            assertEquals(ViSegmentType.CONNECT_REJECT, ViSegment.connectionSegmentAt(out));
        } finally {
            out.release();
            ch.finishAndReleaseAll();
        }
    }
}
