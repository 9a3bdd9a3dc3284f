package dev.iwarp.ift;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.FuzzInput;
import dev.iwarp.testkit.fuzz.FuzzLogs;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fuzz target for the IFT adaption indication exchange (draft-williams-iwarp-ift-01 §4; Jazzer) as
 * node A or node B; the octets after the indication go to the framer it hands over to. {@code mvn
 * verify} replays {@code src/test/resources/dev/iwarp/ift/IftAdaptionFuzzTestInputs/adaption/} (the
 * draft's AI and F vectors); {@code .ci/fuzz} fuzzes. Each input must end in no exception other than
 * {@link IftException} (thrown, fired, logged or as the adaption's cause) and no buffer left referenced.
 */
@ExtendWith(FuzzLogs.class)
class IftAdaptionFuzzTest {

    /**
     * The adaption handler fed the peer's octets: its indication(s), then frames for the framer it
     * hands over to. Octet 0: bit 0 node A (else node B), bits 1-2 header/payload CRCs sent, bits 3-4
     * checked, bits 5-6 required of the peer, bit 7 DDP mode. Octet 1: split seed. Then the stream.
     */
    @FuzzTest
    void adaption(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int cfg = in.u8();
        int splitSeed = in.u8();
        boolean nodeA = (cfg & 1) != 0;
        IftSettings settings;
        try {
            settings = IftSettings.builder().vTag(nodeA ? IftVectors.VTAG_A : IftVectors.VTAG_B)
                    .sendCrcs((cfg & 2) != 0, (cfg & 4) != 0).checkCrcs((cfg & 8) != 0, (cfg & 16) != 0)
                    .requirePeerCrcs((cfg & 32) != 0, (cfg & 64) != 0)
                    .mode((cfg & 128) != 0 ? IftMode.DDP : IftMode.RDMA).build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            return; // a combination the settings refuse: nothing to fuzz
        }
        TrackingAllocator alloc = new TrackingAllocator();
        IftFuzzing.App app = new IftFuzzing.App();
        IftAdaptionHandler ift = nodeA ? IftAdaptionHandler.nodeA(settings) : IftAdaptionHandler.nodeB(settings);
        EmbeddedChannel ch = IftFuzzing.channel(alloc, ift, app);
        try {
            FuzzChecks.feed(ch, alloc, in.rest(), splitSeed);
            if (app.completion != null && app.completion.isSuccess()) {
                ch.writeOutbound(alloc.heapBuffer(20).writeZero(20)); // one ULPDU out as negotiated
            }
            FuzzChecks.drain(ch);
            ch.close();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, IftFuzzing.TYPED);
        } finally {
            IftFuzzing.finish(ch);
        }
        FuzzChecks.check(app, alloc, IftFuzzing.TYPED);
        if (app.completion != null && !app.completion.isSuccess()) {
            FuzzChecks.assertTyped(app.completion.cause(), IftFuzzing.TYPED);
        }
    }
}
