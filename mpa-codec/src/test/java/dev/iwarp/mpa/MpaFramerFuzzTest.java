package dev.iwarp.mpa;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.FuzzInput;
import dev.iwarp.testkit.fuzz.FuzzLogs;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzz target for the MPA FPDU framer (RFC 5044 §4-§5; Jazzer) with CRC and markers each on or off.
 * {@code mvn verify} replays the stored corpus ({@code src/test/resources/dev/iwarp/mpa/
 * MpaFramerFuzzTestInputs/framer/}: siw's FPDU streams and built streams); {@code .ci/fuzz} fuzzes.
 * Each input must end in no exception other than the MPA errors, no buffer left referenced, and, for
 * streams we framed ourselves and did not corrupt, every ULPDU back as sent.
 */
@ExtendWith(FuzzLogs.class)
class MpaFramerFuzzTest {

    /**
     * The FPDU framer (RFC 5044 §4) with CRC and markers each on or off. Octet 0: bit 0 CRC, 1 markers
     * from the peer, 2 markers to the peer, 3 hold sends until a valid FPDU (rule 4), 4 build the
     * stream (else raw octets). Octet 1: split seed. Octet 2: largest ULPDU accepted (x 256, 0 = 65535).
     * Octet 3: number of corruptions (built streams). Built streams: the rest is ULPDUs (one length
     * octet x 4, then that many octets) framed by a framer with the same settings, then corrupted at
     * (u16 position, u8 xor) pairs; an uncorrupted stream must come back ULPDU for ULPDU.
     */
    @FuzzTest
    void framer(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int cfg = in.u8();
        int splitSeed = in.u8();
        int max = in.u8() * 256;
        int corruptions = in.u8() & 7;
        boolean crc = (cfg & 1) != 0;
        boolean markersRx = (cfg & 2) != 0;
        boolean markersTx = (cfg & 4) != 0;
        boolean build = (cfg & 0x10) != 0;
        int maxUlpdu = max == 0 ? 0xFFFF : max;

        TrackingAllocator alloc = new TrackingAllocator();
        byte[] stream;
        List<byte[]> sent = new ArrayList<>();
        int[][] flips = new int[corruptions][];
        if (build) {
            for (int i = 0; i < corruptions; i++) {
                flips[i] = new int[] {in.u16(), in.u8() | 1};
            }
            while (in.hasMore()) {
                sent.add(in.bytes(in.u8() * 4));
            }
            stream = MpaFuzzing.frame(sent, crc, markersRx, alloc);
            for (int[] f : flips) {
                if (stream.length > 0) {
                    stream[f[0] % stream.length] ^= (byte) f[1];
                }
            }
        } else {
            stream = in.rest();
        }

        MpaFuzzing.App app = new MpaFuzzing.App(false);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(new MpaFramer(crc, markersTx, markersRx, maxUlpdu, 1024, (cfg & 8) != 0), app);
        try {
            ch.writeOutbound(alloc.heapBuffer(600).writeZero(600)); // crosses a marker position when on
            FuzzChecks.feed(ch, alloc, stream, splitSeed);
            ch.close();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, MpaFuzzing.TYPED);
        } finally {
            MpaFuzzing.finish(ch);
        }
        FuzzChecks.check(app, alloc, MpaFuzzing.TYPED);
        if (build && corruptions == 0 && sent.stream().allMatch(u -> u.length <= maxUlpdu)) {
            assertEquals(List.of(), app.exceptions);
            assertEquals(sent.size(), app.received.size(), "ULPDUs delivered");
            for (int i = 0; i < sent.size(); i++) {
                assertArrayEquals(sent.get(i), app.received.get(i), "ULPDU " + i);
            }
        }
    }
}
