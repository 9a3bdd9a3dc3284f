package dev.iwarp.mpa;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.FuzzInput;
import dev.iwarp.testkit.fuzz.FuzzLogs;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fuzz target for MPA startup (RFC 5044 §7.1, RFC 6581, Rev 0/1/2; Jazzer) in either role.
 * {@code mvn verify} replays the stored corpus ({@code src/test/resources/dev/iwarp/mpa/
 * MpaStartupFuzzTestInputs/startup/}: siw's Requests, Replies and the FPDUs after them); {@code
 * .ci/fuzz} fuzzes. Each input must end in no exception other than the MPA errors (thrown, fired,
 * logged or as the startup's cause) and no buffer left referenced.
 */
@ExtendWith(FuzzLogs.class)
class MpaStartupFuzzTest {

    /**
     * The startup handler in either role (RFC 5044 §7.1, RFC 6581, Rev 0/1/2) fed a peer's octets: the
     * Request (Responder) or Reply (Initiator), then whatever follows goes to the negotiated framer.
     * Octet 0: bit 0 Initiator, 1 CRC, 2 markers, 3 peer-to-peer, 4 reject, 5-6 revision (0 = 2),
     * 7 minimum revision 0 (else 1). Octet 1: TCP split seed. Octet 2: Private Data limit / 2.
     * Then the stream.
     */
    @FuzzTest
    void startup(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int cfg = in.u8();
        int splitSeed = in.u8();
        int pdLimit = Math.min(512, in.u8() * 2 + 2);
        boolean initiator = (cfg & 1) != 0;
        int revision = (cfg >>> 5) & 3;
        revision = revision == 0 || revision == 3 ? 2 : revision - 1;
        MpaSettings settings = MpaSettings.builder().revision(revision).minRevision((cfg & 0x80) != 0 ? 0 : Math.min(1, revision))
                .crc((cfg & 2) != 0).markers((cfg & 4) != 0).peerToPeer(revision == 2 && (cfg & 8) != 0)
                .privateDataLimit(pdLimit).privateData(new byte[] {1, 2, 3}).build();
        boolean reject = (cfg & 0x10) != 0;

        TrackingAllocator alloc = new TrackingAllocator();
        MpaFuzzing.App app = new MpaFuzzing.App(reject);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        MpaStartupHandler mpa = initiator ? MpaStartupHandler.initiator(settings) : MpaStartupHandler.responder(settings);
        ch.pipeline().addLast(mpa, app);
        try {
            FuzzChecks.feed(ch, alloc, in.rest(), splitSeed);
            if (app.completion != null && app.completion.isSuccess()) {
                ch.writeOutbound(alloc.heapBuffer(4).writeInt(0x01020304)); // one ULPDU out, framed as negotiated
            }
            FuzzChecks.drain(ch);
            ch.close();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, MpaFuzzing.TYPED);
        } finally {
            MpaFuzzing.finish(ch);
        }
        FuzzChecks.check(app, alloc, MpaFuzzing.TYPED);
        if (app.completion != null && !app.completion.isSuccess()) {
            FuzzChecks.assertTyped(app.completion.cause(), MpaFuzzing.TYPED);
        }
    }
}
