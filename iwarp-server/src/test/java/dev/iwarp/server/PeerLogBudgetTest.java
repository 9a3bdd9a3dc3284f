package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import dev.iwarp.testkit.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Log lines peers can cause, on the limiter's defaults: warnings limited per source prefix (not per address), a cap on
 * all peers' warnings together, and connection events (INFO lines naming a peer) aggregated above a rate.
 */
class PeerLogBudgetTest {
    private static final Logger CODEC = LoggerFactory.getLogger("dev.iwarp.mpa.SomeCodec");
    private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    private final PeerWarningLimiter limiter = new PeerWarningLimiter();

    @BeforeEach
    void install() {
        limiter.setWindowSeconds(3600); // the window never ends during the test: flush() reports
        limiter.setContext(context);
        limiter.start();
        context.addTurboFilter(limiter);
    }

    @AfterEach
    void remove() {
        context.getTurboFilterList().remove(limiter);
        limiter.stop();
    }

    private long lines(LogCapture log) {
        return log.events().stream().filter(e -> e.getLoggerName().equals(CODEC.getName())).count();
    }

    @Test
    void addressesOfOneSlash24ShareOneWarningBudget() {
        try (LogCapture log = LogCapture.of("dev.iwarp")) {
            for (int i = 0; i < 40; i++) {
                CODEC.warn("peer {}: bad CRC; closing", new InetSocketAddress("192.0.2." + (1 + i % 8), 40000));
            }
            assertEquals(5, lines(log), "5 WARNs for 192.0.2.0/24, however many of its addresses are used");
            CODEC.warn("peer {}: bad CRC; closing", new InetSocketAddress("198.51.100.1", 40000));
            assertEquals(6, lines(log), "another prefix is not affected");
            limiter.flush(true);
            assertEquals(1, log.count(Level.WARN, "35 more warnings about peers in 192.0.2.0/24"),
                    log.lines(Level.WARN, l -> l.contains("more")).toString());
        }
    }

    @Test
    void allPeersTogetherHaveACap() {
        try (LogCapture log = LogCapture.of("dev.iwarp")) {
            for (int i = 0; i < 1000; i++) { // one WARN from each of 1000 /24 prefixes
                CODEC.warn("peer {}: bad CRC; closing", new InetSocketAddress("10." + (i / 250) + "." + (i % 250)
                        + ".1", 40000));
            }
            long passed = lines(log);
            assertTrue(passed <= PeerWarningLimiter.DEFAULT_GLOBAL_PER_WINDOW, passed + " WARNs passed");
            limiter.flush(true);
            long summaries = log.events().stream()
                    .filter(e -> e.getLoggerName().equals(PeerWarningLimiter.class.getName())).count();
            assertTrue(summaries <= 2, summaries + " summary lines");
            assertEquals(1, log.count(Level.WARN, (1000 - passed) + " more warnings"),
                    log.lines(Level.WARN, l -> l.contains("more")).toString());
        }
    }

    @Test
    void connectionEventsAreAggregatedAboveARate() {
        try (LogCapture log = LogCapture.of("dev.iwarp")) {
            for (int i = 0; i < 3000; i++) {
                CODEC.info("{} connected: Rev 2", new InetSocketAddress("10.1." + (i / 250) + "." + (i % 250), 4000));
            }
            long passed = lines(log);
            assertTrue(passed <= PeerWarningLimiter.DEFAULT_EVENTS_PER_WINDOW, passed + " INFO lines passed");
            limiter.flush(true);
            assertEquals(1, log.count(Level.INFO, (3000 - passed) + " more connection events"),
                    log.lines(Level.INFO, l -> l.contains("more")).toString());
        }
    }
}
