package dev.iwarp.ddp;

import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.testkit.ChannelOctets;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static dev.iwarp.ddp.AccessFlags.REMOTE_READ;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * A payload sent from a stream's reused region slice through MPA with markers (RFC 5044 §5: a marker every 512
 * octets of the stream, so the payload leaves as several pieces of one ULPDU): while any piece still waits in the
 * outbound buffer, the slice stays pointed at its range and is not handed out again; once the last piece left it
 * goes back to the pool.
 */
class RegionViewsMarkerPiecesTest {
    @Test
    void aSliceCutByMarkersStaysItsRangeUntilItsLastQueuedPieceLeft() {
        ByteBuf region = Unpooled.directBuffer(4096, 4096);
        for (int i = 0; i < 4096; i++) {
            region.writeByte(i * 7);
        }
        TaggedBufferTable table = new TaggedBufferTable();
        RegionViews views = new RegionViews();
        TaggedBuffer b = table.register(new Object(), region, 0x1000, REMOTE_READ, false);
        MpaFramer framer = new MpaFramer(false, true, false, 65535, 65535, false);
        EmbeddedChannel ch = new EmbeddedChannel(framer);
        ByteBuf header = Unpooled.wrappedBuffer(new byte[14]);
        ByteBuf payload = b.read(0x1000 + 100, 1500, views);
        framer.writeUlpdu(header, payload, ch.newPromise());
        ch.flush(); // the header, the pieces, the markers and the trailer wait in the outbound queue
        for (int i = 0; i < 8; i++) {
            ByteBuf other = views.slice(region, 3000, 64);
            assertNotSame(payload, other, "a slice with a piece still queued is never handed out again");
            assertEquals(64, other.readableBytes());
            other.release();
        }
        byte[] wire = ChannelOctets.drainOutbound(ch);
        byte[] sent = new byte[1500];
        region.getBytes(100, sent);
        assertArrayEquals(sent, withoutMarkersHeaderAndTrailer(wire, 14, 1500), "the range's own octets went out");
        ByteBuf next = views.slice(region, 0, 8);
        assertSame(payload, next, "its last piece left: the slice is back in the pool");
        next.release();
        header.release();
        ch.finishAndReleaseAll();
        table.deregister(b.stag());
        assertEquals(1, region.refCnt(), "no slice holds the region any more");
        region.release();
    }

    /** The ULPDU's payload octets of one FPDU sent from stream position 0 with markers (RFC 5044 §4.3, §5). */
    private static byte[] withoutMarkersHeaderAndTrailer(byte[] wire, int headerLength, int payloadLength) {
        byte[] stream = new byte[wire.length];
        int n = 0;
        for (int i = 0; i < wire.length; i++) {
            if (i % 512 < 4) { // a marker at every 512th octet of the stream, the first at position 0
                continue;
            }
            stream[n++] = wire[i];
        }
        int from = 2 + headerLength; // ULPDU_Length, then the DDP header
        return Arrays.copyOfRange(stream, from, from + payloadLength);
    }
}
