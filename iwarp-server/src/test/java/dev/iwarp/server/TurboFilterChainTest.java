package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.junit.jupiter.api.Test;
import org.slf4j.Marker;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Several turbo filters as the one filter of a logging context (a context of its own per test). */
class TurboFilterChainTest {
    private static final int CALLS = 100_000;

    /** A filter that counts the calls it was asked about and replies {@code reply}. */
    private static final class Counting extends TurboFilter {
        final AtomicInteger asked = new AtomicInteger();
        final FilterReply reply;

        Counting(FilterReply reply) {
            this.reply = reply;
            start();
        }

        @Override
        public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params,
                                  Throwable t) {
            asked.incrementAndGet();
            return reply;
        }
    }

    @Test
    void aDisabledLoggingCallWithTwoFiltersAllocatesNothing() throws Exception {
        LoggerContext context = new LoggerContext();
        context.addTurboFilter(new Counting(FilterReply.NEUTRAL)); // as logback.xml installs the limiter
        TurboFilterChain.add(context, new Counting(FilterReply.NEUTRAL)); // as Main installs the OOM filter
        Logger log = context.getLogger("dev.iwarp.mpa.FpduWriter");
        log.setLevel(Level.WARN);
        long[] octets = new long[1];
        Thread t = new FastThreadLocalThread(() -> {
            for (int i = 0; i < CALLS; i++) { // warm: the JIT's first compilations allocate on this thread
                log.isTraceEnabled();
            }
            long before = allocatedBytes();
            for (int i = 0; i < CALLS; i++) {
                log.isTraceEnabled();
            }
            octets[0] = allocatedBytes() - before;
        });
        t.start();
        t.join();
        // Logback's own list of two copies itself per call: 24 B each, 2.4 MB here
        assertTrue(octets[0] < 4096, octets[0] + " octets allocated by " + CALLS + " isTraceEnabled calls");
        assertEquals(1, context.getTurboFilterList().size());
        context.stop();
    }

    @Test
    void theFirstReplyThatIsNotNeutralDecidesAsInLogbacksList() {
        LoggerContext context = new LoggerContext();
        Counting first = new Counting(FilterReply.NEUTRAL);
        Counting deny = new Counting(FilterReply.DENY);
        Counting last = new Counting(FilterReply.ACCEPT);
        context.addTurboFilter(first);
        TurboFilterChain.add(context, deny);
        TurboFilterChain.add(context, last);
        assertEquals(1, context.getTurboFilterList().size(), "one filter in Logback's list");
        assertEquals(List.of(first, deny, last), TurboFilterChain.filtersOf(context));
        Logger log = context.getLogger("x");
        assertFalse(log.isErrorEnabled(), "the DENY of the second filter");
        assertEquals(1, first.asked.get());
        assertEquals(1, deny.asked.get());
        assertEquals(0, last.asked.get(), "not asked after a decision");
        context.stop();
        assertFalse(deny.isStarted(), "stopping the context stops the filters in the chain");
    }

    @Test
    void aFilterAddedFirstIsAskedBeforeOneThatAccepts() {
        LoggerContext context = new LoggerContext();
        Counting accept = new Counting(FilterReply.ACCEPT);
        context.addTurboFilter(accept);
        Counting first = new Counting(FilterReply.NEUTRAL);
        TurboFilterChain.addFirst(context, first);
        assertTrue(context.getLogger("x").isTraceEnabled(), "the ACCEPT decides");
        assertEquals(1, first.asked.get(), "asked before the filter that accepted");
        assertEquals(List.of(first, accept), TurboFilterChain.filtersOf(context));
        context.stop();
    }

    @Test
    void aFilterAloneIsAddedAsItIs() {
        LoggerContext context = new LoggerContext();
        Counting only = new Counting(FilterReply.NEUTRAL);
        TurboFilterChain.add(context, only);
        assertSame(only, context.getTurboFilterList().get(0));
        context.stop();
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }
}
