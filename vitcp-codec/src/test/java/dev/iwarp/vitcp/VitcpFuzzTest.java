package dev.iwarp.vitcp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.FuzzInput;
import dev.iwarp.testkit.fuzz.FuzzLogs;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzz target for the VI/TCP segment decoder (draft-dicecco-vitcp-01 §3; Jazzer). Each input must
 * end in no exception other than {@link VitcpProtocolException}, no buffer left referenced, and the
 * same segments (fields, payload octets, CRC verdict) and the same verdict whether the stream arrives
 * whole or cut into the pieces the split seed chooses, and, when the input asks, whether the cut stream's large
 * payloads are read into a destination ({@link VitcpSegmentDecoder#receiveWith}) or come whole.
 */
@ExtendWith(FuzzLogs.class)
class VitcpFuzzTest {
    static final List<Class<? extends Throwable>> TYPED = List.of(VitcpProtocolException.class);

    /**
     * Octet 0: bits 0-1 CRC mode, bit 2 data-phase CRC trailers on (§3.5), bit 3 the cut stream's payloads go to a
     * destination. Octet 1: split seed. Then the stream.
     */
    @FuzzTest
    void segmentDecoder(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int cfg = in.u8();
        int splitSeed = in.u8();
        VitcpCrcMode[] modes = VitcpCrcMode.values();
        VitcpCrcMode mode = modes[(cfg & 3) % modes.length];
        boolean crc = (cfg & 4) != 0;
        byte[] stream = in.rest();
        List<String> whole = decode(List.of(stream), mode, crc, false);
        List<String> split = decode(FuzzInput.split(stream, Math.max(1, splitSeed)), mode, crc, (cfg & 8) != 0);
        assertEquals(whole, split, "segments do not depend on how TCP cut the stream");
    }

    /**
     * Each segment (or the error) as text: fields, then the payload's octets (whether it was read into a
     * destination is not said). {@code place}: every payload the decoder asks about goes to one region.
     */
    private static List<String> decode(List<byte[]> pieces, VitcpCrcMode mode, boolean crc, boolean place) {
        TrackingAllocator alloc = new TrackingAllocator();
        List<String> out = new ArrayList<>();
        VitcpSegmentDecoder decoder = new VitcpSegmentDecoder(mode);
        decoder.crcEnabled(crc);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(decoder);
        ByteBuf region = place ? Unpooled.directBuffer(65536, 65536) : null;
        if (place) {
            decoder.receiveWith((header, payloadLength) -> region.retainedSlice(0, payloadLength).clear());
        }
        try {
            for (byte[] piece : pieces) {
                VitcpProtocolException error = null;
                try {
                    ch.writeInbound(alloc.track(alloc.heapBuffer(piece.length).writeBytes(piece)));
                } catch (VitcpProtocolException e) {
                    error = e;
                }
                // segments decoded before an error in the same read are passed on before it
                for (ViSegment s; (s = ch.readInbound()) != null; ) {
                    out.add(s.toString().replace(" placed", "") + " " + ByteBufUtil.hexDump(s.content()));
                    s.release();
                }
                if (error != null) {
                    out.add("error " + error.violation());
                }
            }
            ch.close();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, TYPED);
        } finally {
            ch.finishAndReleaseAll();
            if (region != null) {
                assertEquals(1, region.refCnt(), "every destination released");
                region.release();
            }
        }
        FuzzChecks.assertNoUntypedLogged(TYPED);
        alloc.assertAllReleased();
        return out;
    }
}
