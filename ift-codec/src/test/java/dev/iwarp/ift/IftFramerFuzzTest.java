package dev.iwarp.ift;

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
 * Fuzz target for the IFT frame codec (draft-williams-iwarp-ift-01 §5; Jazzer) with header and
 * payload CRCs each sent or not and checked or not. {@code mvn verify} replays {@code
 * src/test/resources/dev/iwarp/ift/IftFramerFuzzTestInputs/framer/}; {@code .ci/fuzz} fuzzes. Each input
 * must end in no exception other than {@link IftException}, no buffer left referenced, and, for
 * frames we built ourselves and did not corrupt, every ULPDU back as sent.
 */
@ExtendWith(FuzzLogs.class)
class IftFramerFuzzTest {

    /**
     * Node B's frame codec receiving node A's frames. Octet 0: bits 0-1 header/payload CRCs node A
     * sends, bits 2-3 whether node B checks them, bit 4 build the stream (else raw octets). Octet 1:
     * split seed. Octet 2: number of corruptions (built streams). Built streams: the rest is ULPDUs (one
     * length octet, then that many octets) framed by node A's codec, then corrupted at (u16 position,
     * u8 xor) pairs; an uncorrupted stream must come back ULPDU for ULPDU.
     */
    @FuzzTest
    void framer(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int cfg = in.u8();
        int splitSeed = in.u8();
        int corruptions = in.u8() & 7;
        boolean hc = (cfg & 1) != 0;
        boolean pc = (cfg & 2) != 0;
        boolean build = (cfg & 16) != 0;
        TrackingAllocator alloc = new TrackingAllocator();
        IftParameters a = IftFramerTest.nodeA(hc, pc);
        IftParameters b = IftFramerTest.nodeB(hc, pc, (cfg & 4) != 0, (cfg & 8) != 0, IftSettings.defaults());
        byte[] stream;
        List<byte[]> sent = new ArrayList<>();
        if (build) {
            int[][] flips = new int[corruptions][];
            for (int i = 0; i < corruptions; i++) {
                flips[i] = new int[] {in.u16(), in.u8() | 1};
            }
            while (in.hasMore()) {
                byte[] u = in.bytes(in.u8());
                if (u.length >= 1) {
                    sent.add(u);
                }
            }
            stream = IftFuzzing.frame(a, sent, alloc);
            for (int[] f : flips) {
                if (stream.length > 0) {
                    stream[f[0] % stream.length] ^= (byte) f[1];
                }
            }
        } else {
            stream = in.rest();
        }
        IftFuzzing.App app = new IftFuzzing.App();
        EmbeddedChannel ch = IftFuzzing.channel(alloc, new IftFramer(b), app);
        try {
            FuzzChecks.feed(ch, alloc, stream, splitSeed);
            ch.close();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, IftFuzzing.TYPED);
        } finally {
            IftFuzzing.finish(ch);
        }
        FuzzChecks.check(app, alloc, IftFuzzing.TYPED);
        if (build && corruptions == 0) {
            assertEquals(List.of(), app.exceptions);
            assertEquals(sent.size(), app.received.size(), "ULPDUs delivered");
            for (int i = 0; i < sent.size(); i++) {
                assertArrayEquals(sent.get(i), app.received.get(i), "ULPDU " + i);
            }
        }
    }
}
