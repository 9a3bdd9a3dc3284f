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

/** WARNs a peer causes are limited per source address, and what was dropped is counted in one line. */
class PeerWarningLimiterTest {
    private static final Logger CODEC = LoggerFactory.getLogger("dev.iwarp.mpa.SomeCodec");
    private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    private final PeerWarningLimiter limiter = new PeerWarningLimiter();

    @BeforeEach
    void install() {
        limiter.setPerSource(5);
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

    @Test
    void fiveWarningsPerSourceThenOneCountLine() {
        InetSocketAddress attacker = new InetSocketAddress("192.0.2.7", 40000);
        InetSocketAddress other = new InetSocketAddress("198.51.100.8", 40001);
        try (LogCapture log = LogCapture.of("dev.iwarp")) {
            for (int i = 0; i < 1000; i++) {
                CODEC.warn("[id: {}] peer {}: bad CRC; closing", i, new InetSocketAddress("192.0.2.7", 40000 + i));
            }
            CODEC.warn("[id] peer {}: bad CRC; closing", other);
            CODEC.info("[id] peer {}: connected", attacker); // INFO lines: limited only beyond a rate
            CODEC.warn("a warning that names no peer");
            limiter.flush(true);
            assertEquals(5, log.count(Level.WARN, "peer /192.0.2.7"), "5 of the attacker's 1000 WARNs");
            assertEquals(1, log.count(Level.WARN, "peer /198.51.100.8"), "another source prefix is not affected");
            assertEquals(1, log.count(Level.INFO, "connected"));
            assertEquals(1, log.count(Level.WARN, "names no peer"));
            assertEquals(1, log.count(Level.WARN, "995 more warnings about peers in 192.0.2.0/24"), log.lines(Level.WARN,
                    l -> l.contains("more warnings")).toString());
            assertEquals(9, log.events().stream().filter(e -> e.getLoggerName().equals(CODEC.getName())
                    || e.getLoggerName().equals(PeerWarningLimiter.class.getName())).count(),
                    "5 + 1 + 1 + 1 + the count line");
        }
    }
}
