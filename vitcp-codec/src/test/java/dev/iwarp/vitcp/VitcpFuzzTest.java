package dev.iwarp.vitcp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.FuzzInput;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzz target for the VI/TCP segment decoder (draft-dicecco-vitcp-01 §3; Jazzer). Each input must
 * end in no exception other than {@link VitcpProtocolException}, no buffer left referenced, and the
 * same segments (fields, payload octets, CRC verdict) and the same verdict whether the stream arrives
 * whole or cut into the pieces the split seed chooses.
 */
class VitcpFuzzTest {
    static final List<Class<? extends Throwable>> TYPED = List.of(VitcpProtocolException.class);

    @BeforeAll
    static void quiet() {
        FuzzChecks.captureLogs();
    }

    @AfterAll
    static void loud() {
        FuzzChecks.restoreLogs();
    }

    /**
     * Octet 0: bits 0-1 CRC mode, bit 2 data-phase CRC trailers on (§3.5). Octet 1: split seed. Then
     * the stream.
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
        List<String> whole = decode(List.of(stream), mode, crc);
        List<String> split = decode(FuzzInput.split(stream, Math.max(1, splitSeed)), mode, crc);
        assertEquals(whole, split, "segments do not depend on how TCP cut the stream");
    }

    /** Each segment (or the error) as text: fields, then the payload's octets. */
    private static List<String> decode(List<byte[]> pieces, VitcpCrcMode mode, boolean crc) {
        TrackingAllocator alloc = new TrackingAllocator();
        List<String> out = new ArrayList<>();
        VitcpSegmentDecoder decoder = new VitcpSegmentDecoder(mode);
        decoder.crcEnabled(crc);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(decoder);
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
                    out.add(s + " " + ByteBufUtil.hexDump(s.content()));
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
        }
        FuzzChecks.assertNoUntypedLogged(TYPED);
        alloc.assertAllReleased();
        return out;
    }
}
