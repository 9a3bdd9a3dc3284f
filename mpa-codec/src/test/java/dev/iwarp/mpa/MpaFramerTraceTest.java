package dev.iwarp.mpa;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.iwarp.testkit.LevelChecks;
import dev.iwarp.testkit.LogCapture;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static dev.iwarp.testkit.ChannelOctets.drainInbound;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The framer's per-FPDU trace: whether it is on is asked once per connection (when the framer is made), not per
 * FPDU (each level check asks the logging backend's turbo filters); when trace is on at that time, every FPDU sent
 * and received is still traced.
 */
class MpaFramerTraceTest {
    private static final int FPDUS = 100;

    /** Sends {@link #FPDUS} FPDUs (large and small payloads) through one framer into another. */
    private static void roundTrip() {
        EmbeddedChannel tx = new EmbeddedChannel(new MpaFramer(true, false, false, 0xFFFF, 8192, false));
        EmbeddedChannel rx = new EmbeddedChannel(new MpaFramer(true, false, false, 0xFFFF, 8192, false));
        for (int i = 0; i < FPDUS; i++) {
            tx.writeOutbound(Unpooled.wrappedBuffer(new byte[i % 2 == 0 ? 40 : 4000]));
        }
        for (ByteBuf b; (b = tx.readOutbound()) != null; ) {
            rx.writeInbound(b);
        }
        assertEquals(FPDUS, drainInbound(rx).size());
        assertFalse(tx.finish());
        assertFalse(rx.finish());
    }

    @Test
    void traceIsAskedOncePerHalfConnectionNotPerFpdu() {
        int checks;
        try (LevelChecks counted = LevelChecks.of(MpaFramer.class, Level.TRACE)) {
            roundTrip();
            checks = counted.count();
        }
        // two framers, each with a writer and a reader; before: one check per FPDU on each side (2 x 100 more)
        assertTrue(checks <= 4, "TRACE level checks for " + FPDUS + " FPDUs each way: " + checks);
    }

    @Test
    void traceOnWhenTheConnectionStartsTracesEveryFpdu() {
        Logger framerLog = (Logger) LoggerFactory.getLogger(MpaFramer.class);
        Level before = framerLog.getLevel();
        boolean additive = framerLog.isAdditive();
        framerLog.setLevel(Level.TRACE);
        framerLog.setAdditive(false); // captured here, not printed by the test run's appenders
        try (LogCapture log = LogCapture.of(MpaFramer.class.getName())) {
            roundTrip();
            assertEquals(FPDUS, log.count(Level.TRACE, "tx FPDU"));
            assertEquals(FPDUS, log.count(Level.TRACE, "rx FPDU"));
        } finally {
            framerLog.setLevel(before);
            framerLog.setAdditive(additive);
        }
    }
}
