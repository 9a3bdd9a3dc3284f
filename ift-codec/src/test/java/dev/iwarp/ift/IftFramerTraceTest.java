package dev.iwarp.ift;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.iwarp.testkit.LevelChecks;
import dev.iwarp.testkit.LogCapture;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static dev.iwarp.testkit.ChannelOctets.buf;
import static dev.iwarp.testkit.ChannelOctets.drainInbound;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The framer's per-frame trace: whether it is on is asked once per connection (when the framer is made), not per
 * frame (each level check asks the logging backend's turbo filters); when trace is on at that time, every frame
 * sent and received is still traced.
 */
class IftFramerTraceTest {
    private static final int FRAMES = 100;

    /** Sends {@link #FRAMES} frames (the F2 Send) through one framer into another. */
    private static void roundTrip() {
        EmbeddedChannel tx = IftFramerTest.sender(true, true);
        EmbeddedChannel rx = IftFramerTest.receiver(true, true);
        byte[] ulpdu = IftFramerTest.ulpdu("F2");
        for (int i = 0; i < FRAMES; i++) {
            tx.writeOutbound(buf(ulpdu));
        }
        for (ByteBuf b; (b = tx.readOutbound()) != null; ) {
            rx.writeInbound(b);
        }
        assertEquals(FRAMES, drainInbound(rx).size());
        assertFalse(tx.finish());
        assertFalse(rx.finish());
    }

    @Test
    void traceIsAskedOncePerHalfConnectionNotPerFrame() {
        int checks;
        try (LevelChecks counted = LevelChecks.of(IftFramer.class, Level.TRACE)) {
            roundTrip();
            checks = counted.count();
        }
        // two framers, each with a writer and a reader; before: one check per frame on each side (2 x 100 more)
        assertTrue(checks <= 4, "TRACE level checks for " + FRAMES + " frames each way: " + checks);
    }

    @Test
    void traceOnWhenTheConnectionStartsTracesEveryFrame() {
        Logger framerLog = (Logger) LoggerFactory.getLogger(IftFramer.class);
        Level before = framerLog.getLevel();
        boolean additive = framerLog.isAdditive();
        framerLog.setLevel(Level.TRACE);
        framerLog.setAdditive(false); // captured here, not printed by the test run's appenders
        try (LogCapture log = LogCapture.of(IftFramer.class.getName())) {
            roundTrip();
            assertEquals(FRAMES, log.count(Level.TRACE, "tx IFT frame"));
            assertEquals(FRAMES, log.count(Level.TRACE, "rx IFT frame"));
        } finally {
            framerLog.setLevel(before);
            framerLog.setAdditive(additive);
        }
    }
}
