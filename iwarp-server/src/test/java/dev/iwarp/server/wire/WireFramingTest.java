package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.bootstrap.IwarpConnectionRequest;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.SctpFraming;
import dev.iwarp.ift.IftSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.sctp.SctpSettings;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Each framing's strategy: which framing it is, how the tools' Initiator is set up, and what it says. */
class WireFramingTest {
    private static final IftFraming IFT = IftFraming.of(IftSettings.defaults());
    private static final SctpFraming SCTP = SctpFraming.of(SctpSettings.defaults());

    @Test
    void eachFramingHasItsConstant() {
        assertSame(WireFraming.MPA, WireFraming.of(MpaFraming.of(MpaSettings.defaults())));
        assertSame(WireFraming.IFT, WireFraming.of(IFT));
        assertSame(WireFraming.SCTP, WireFraming.of(SCTP));
        assertThrows(IllegalArgumentException.class, () -> WireFraming.of(new Framing() {
            @Override
            public String name() {
                return "another";
            }

            @Override
            public void addInitiator(ChannelPipeline pipeline) {
            }

            @Override
            public void addResponder(ChannelPipeline pipeline, Consumer<IwarpConnectionRequest> onRequest) {
            }
        }), "a framing the tools do not know");
        assertEquals("iwarp", WireFraming.MPA.wireName());
        assertEquals("ift", WireFraming.IFT.wireName());
        assertEquals("sctp", WireFraming.SCTP.wireName());
        assertSame(PeerFraming.MPA, WireFraming.MPA.peerFraming());
        assertSame(PeerFraming.IFT, WireFraming.IFT.peerFraming());
        assertNull(WireFraming.SCTP.peerFraming(), "SCTP messages: no first octets to tell apart");
    }

    @Test
    void mpaInitiatorFromTheCommandsWishes() {
        MpaSettings s = ((MpaFraming) WireFraming.MPA.initiator(null, true, 500)).settings();
        assertEquals(2, s.revision());
        assertEquals(true, s.crc());
        assertEquals(1, s.ird());
        assertEquals(128, s.ord(), "the read depth capped at 128");
        assertEquals(1, ((MpaFraming) WireFraming.MPA.initiator(null, false, 0)).settings().ord());
        MpaFraming fixed = MpaFraming.of(MpaSettings.builder().revision(1).build());
        assertSame(fixed, WireFraming.MPA.initiator(fixed, true, 16), "ping's own MPA options win");
    }

    @Test
    void iftInitiatorCapsItsOrdAtServesIrd() {
        IftFraming f = (IftFraming) WireFraming.IFT.initiator(IFT, false, 500);
        assertEquals(1, f.ird());
        assertEquals(IftFraming.DEFAULT_DEPTH, f.ord());
        assertEquals(1, ((IftFraming) WireFraming.IFT.initiator(IFT, false, 0)).ord());
        assertSame(SCTP, WireFraming.SCTP.initiator(SCTP, true, 8), "SCTP connects with its options as given");
    }

    @Test
    void whatEachSays() {
        assertEquals("cannot connect to 127.0.0.1:7174: no MPA Reply within 50 ms",
                WireFraming.MPA.noAnswer("127.0.0.1:7174", 50));
        assertEquals("cannot connect to 127.0.0.1:7176: no IFT phase 1 indication within 50 ms",
                WireFraming.IFT.noAnswer("127.0.0.1:7176", 50));
        assertEquals("cannot connect to 127.0.0.1:7177 over SCTP within 50 ms",
                WireFraming.SCTP.noAnswer("127.0.0.1:7177", 50));
        assertEquals("cannot connect to 127.0.0.1:7177 over SCTP: refused",
                WireFraming.SCTP.connectFailed("127.0.0.1:7177", "refused"));
        assertEquals("MPA Reply", WireFraming.MPA.setupCarrier());
        assertEquals("setup Send (IFT)", WireFraming.IFT.setupCarrier());
        assertEquals("setup Send (SCTP)", WireFraming.SCTP.setupCarrier());
        assertEquals("MPA Rev 2, CRC as the client asks, IRD 16 ORD 16",
                WireFraming.MPA.listening(MpaFraming.of(MpaSettings.builder().crc(false).build())));
        assertEquals("MPA Rev 2, CRC forced, IRD 16 ORD 16",
                WireFraming.MPA.listening(MpaFraming.of(MpaSettings.builder().crc(true).build())));
    }

    @Test
    void noFramerBeforeStartupAndNoneOverSctp() {
        EmbeddedChannel ch = new EmbeddedChannel();
        for (WireFraming f : WireFraming.values()) {
            assertNull(f.partialMessage(ch.pipeline()), f + ": no framer in an empty pipeline");
        }
        ch.finishAndReleaseAll();
    }
}
