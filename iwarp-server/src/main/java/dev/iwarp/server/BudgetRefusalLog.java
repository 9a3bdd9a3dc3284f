package dev.iwarp.server;

import dev.iwarp.verbs.MemoryBudget;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The memory budget's refusals as one log line per window, with their counts by cause, never one line per refusal:
 * when many peers fill the budget at once, the log grows by one line per window, not by what they ask. Each peer
 * that is refused still gets its own line when its stream ends (its Terminate, naming the peer, limited per source
 * prefix like every warning naming a peer): the first refusals stay visible, the rest are counted here. The line
 * names no peer. Thread-safe.
 */
final class BudgetRefusalLog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BudgetRefusalLog.class);

    private final MemoryBudget budget;
    private final long windowSeconds;
    private final long[] reported = new long[MemoryBudget.Use.values().length];
    private ScheduledExecutorService timer;

    BudgetRefusalLog(MemoryBudget budget, long windowSeconds) {
        this.budget = budget;
        this.windowSeconds = windowSeconds;
    }

    /** Reports every {@code windowSeconds} from a daemon thread of its own, until {@link #close}. */
    static BudgetRefusalLog start(MemoryBudget budget, long windowSeconds) {
        BudgetRefusalLog log = new BudgetRefusalLog(budget, windowSeconds);
        log.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "memory-budget-log");
            t.setDaemon(true);
            return t;
        });
        log.timer.scheduleAtFixedRate(log::report, windowSeconds, windowSeconds, TimeUnit.SECONDS);
        return log;
    }

    /** Logs one line if reservations were refused since the last report; whether it did. */
    synchronized boolean report() {
        StringBuilder causes = new StringBuilder();
        long total = 0;
        for (MemoryBudget.Use use : MemoryBudget.Use.values()) {
            long now = budget.refusals(use);
            long n = now - reported[use.ordinal()];
            reported[use.ordinal()] = now;
            if (n > 0) {
                causes.append(causes.length() == 0 ? "" : ", ").append(n).append(' ').append(use.description());
                total += n;
            }
        }
        if (total == 0) {
            return false;
        }
        LOG.warn("memory budget: {} reservation(s) refused in the last {} s ({}); {} of {} committed; the peers "
                        + "refused got Terminate 0/0/0xFF or no bench ring", total, windowSeconds, causes,
                ServerMemory.human(budget.committed()), ServerMemory.human(budget.limit()));
        return true;
    }

    /** Stops the timer and reports what is left. */
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
        report();
    }
}
