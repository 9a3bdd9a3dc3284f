package dev.iwarp.server;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.iwarp.verbs.MemoryBudget;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many budget refusals make one line per window, with their counts by cause, and no line when there were none.
 */
class BudgetRefusalLogTest {
    private final Logger logger = (Logger) LoggerFactory.getLogger(BudgetRefusalLog.class);
    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();

    @BeforeEach
    void capture() {
        lines.start();
        logger.addAppender(lines);
    }

    @AfterEach
    void release() {
        logger.detachAppender(lines);
    }

    @Test
    void manyRefusalsAreOneLineWithTheirCountsByCause() {
        MemoryBudget budget = MemoryBudget.of(1024);
        BudgetRefusalLog log = new BudgetRefusalLog(budget, 10);
        assertFalse(log.report(), "nothing refused: no line");
        MemoryBudget.Account holder = budget.newAccount();
        assertTrue(holder.tryReserve(1024));
        for (int peer = 0; peer < 1000; peer++) {
            MemoryBudget.Account a = budget.newAccount();
            assertFalse(a.tryReserve(64 * 1024));
            if (peer % 4 == 0) {
                assertFalse(a.tryReserve(1460, MemoryBudget.Use.READ_RESPONSE_COPIES));
            }
        }
        assertTrue(log.report());
        assertEquals(1, lines.list.size(), "1,250 refusals, one line");
        String line = lines.list.get(0).getFormattedMessage();
        assertTrue(line.contains("1250 reservation(s) refused in the last 10 s (1000 memory to place into, "
                + "250 Read Response copies)"), line);
        assertTrue(line.contains("1.0 KiB of 1.0 KiB committed"), line);
        assertFalse(log.report(), "none since: no line");
        assertFalse(budget.newAccount().tryReserve(1, MemoryBudget.Use.READ_RESPONSE_COPIES));
        log.close();
        assertEquals(2, lines.list.size(), "what is left at the end is reported once");
        assertTrue(lines.list.get(1).getFormattedMessage().contains("1 reservation(s) refused in the last 10 s "
                + "(1 Read Response copies)"), lines.list.get(1).getFormattedMessage());
    }
}
