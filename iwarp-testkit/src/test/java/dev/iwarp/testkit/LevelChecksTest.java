package dev.iwarp.testkit;

import ch.qos.logback.classic.Level;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** LevelChecks counts one logger's checks of one level, on its own thread, until closed. */
class LevelChecksTest {
    private static final Logger COUNTED = LoggerFactory.getLogger(LevelChecksTest.class);
    private static final Logger OTHER = LoggerFactory.getLogger("dev.iwarp.testkit.other");

    @Test
    void countsOnlyItsLoggerAndLevelOnItsThreadUntilClosed() throws Exception {
        LevelChecks checks = LevelChecks.of(LevelChecksTest.class, Level.TRACE);
        try (checks) {
            COUNTED.isTraceEnabled();
            COUNTED.isTraceEnabled();
            COUNTED.isDebugEnabled(); // another level
            OTHER.isTraceEnabled(); // another logger
            Thread t = new Thread(COUNTED::isTraceEnabled); // another thread
            t.start();
            t.join();
            assertEquals(2, checks.count());
        }
        COUNTED.isTraceEnabled(); // closed: no longer asked
        assertEquals(2, checks.count());
    }
}
