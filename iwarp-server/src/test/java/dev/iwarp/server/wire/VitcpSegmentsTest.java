package dev.iwarp.server.wire;

import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What VI/TCP's server wire tells serve's guard: which segments move data, and no framer before the codec. */
class VitcpSegmentsTest {
    @Test
    void segmentsThatMoveData() {
        ViSegment empty = ViSegment.builder(ViSegmentType.SEND).endOfMessage(true).build();
        ViSegment data = ViSegment.builder(ViSegmentType.SEND).endOfMessage(true)
                .build(Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));
        try {
            assertFalse(VitcpServerWire.SEGMENTS.movesData(empty), "an empty Send");
            assertTrue(VitcpServerWire.SEGMENTS.movesData(data), "a Send of 3 octets");
            assertTrue(VitcpServerWire.SEGMENTS.movesData("not a segment"), "anything else counts");
        } finally {
            empty.release();
            data.release();
        }
    }

    @Test
    void noFramerWithoutTheCodec() {
        EmbeddedChannel ch = new EmbeddedChannel();
        assertNull(VitcpServerWire.SEGMENTS.partialMessage(ch.pipeline()));
        ch.finishAndReleaseAll();
    }
}
