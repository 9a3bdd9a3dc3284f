package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultChannelId;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A connection's fields on the lines its pipeline logs, put into the MDC only when a line is logged. */
class ConnectionLogContextTest {
    private static final int BATCHES = 20_000;
    private static final Object MESSAGE = new Object();

    private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    private final Logger log = context.getLogger(ConnectionLogContextTest.class);
    private final Lines lines = new Lines();

    /** The lines logged, each with its MDC as the appender saw it (an encoder reads it when it appends). */
    private static final class Lines extends AppenderBase<ILoggingEvent> {
        final List<Map<String, String>> list = new ArrayList<>();

        @Override
        protected void append(ILoggingEvent e) {
            list.add(Map.copyOf(e.getMDCPropertyMap()));
        }
    }

    /** Logs a line at each read and read-complete (or only asks whether TRACE is on); closes on a read if asked. */
    private final class Logging extends ChannelInboundHandlerAdapter {
        boolean quiet;
        boolean closeOnRead;
        Runnable atRead = () -> { };

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            line("read");
            atRead.run();
            if (closeOnRead) {
                ctx.close();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            line("complete");
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            line("event");
        }

        private void line(String what) {
            if (quiet) {
                if (log.isTraceEnabled()) { // off: asked like the codecs' per-FPDU checks
                    log.trace(what);
                }
            } else {
                log.info(what);
            }
        }
    }

    @BeforeEach
    void capture() {
        lines.setContext(context);
        lines.start();
        log.addAppender(lines);
        log.setAdditive(false);
        log.setLevel(Level.INFO);
    }

    @AfterEach
    void release() {
        log.detachAppender(lines);
        log.setAdditive(true);
        log.setLevel(null);
    }

    private static EmbeddedChannel channel(Logging handler) {
        EmbeddedChannel ch = new EmbeddedChannel(DefaultChannelId.newInstance()); // ids of their own
        ConnectionLogContext.install(ch, "iwarp");
        ch.pipeline().addLast(handler);
        return ch;
    }

    /** Each line's conn field, or "-" for none. */
    private List<String> conns() {
        List<String> conns = new ArrayList<>();
        for (Map<String, String> mdc : lines.list) {
            conns.add(mdc.getOrDefault(ConnectionLogContext.CONN, "-"));
        }
        return conns;
    }

    @Test
    void readsAndTheirCompletionCarryTheFieldsAndTheMdcHasNoneAfter() {
        EmbeddedChannel ch = channel(new Logging());
        String id = ch.id().asShortText();
        try {
            ch.pipeline().fireChannelRead(MESSAGE).fireChannelRead(MESSAGE).fireChannelReadComplete();
            log.info("after");
            assertEquals(List.of(id, id, id, "-"), conns());
            Map<String, String> first = lines.list.get(0);
            assertEquals("iwarp", first.get(ConnectionLogContext.WIRE));
            assertEquals("embedded", first.get(ConnectionLogContext.PEER));
            assertNull(MDC.get(ConnectionLogContext.CONN), "no field left on the thread");
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void anotherConnectionsEventInsideAnEventGivesTheThreadBackItsConnection() {
        Logging inner = new Logging();
        EmbeddedChannel b = channel(inner);
        Logging outer = new Logging();
        EmbeddedChannel a = channel(outer);
        outer.atRead = () -> b.pipeline().fireUserEventTriggered("x"); // b's event while a's read runs
        String idA = a.id().asShortText();
        String idB = b.id().asShortText();
        try {
            a.pipeline().fireChannelRead(MESSAGE).fireChannelReadComplete();
            assertEquals(List.of(idA, idB, idA), conns(), "a's fields were in the MDC when b's event came");
            lines.list.clear();
            outer.quiet = true; // a logs nothing before b's event: a's fields were never put
            a.pipeline().fireChannelRead(MESSAGE);
            outer.quiet = false;
            a.pipeline().fireChannelReadComplete();
            assertEquals(List.of(idB, idA), conns());
            assertNull(MDC.get(ConnectionLogContext.CONN));
        } finally {
            a.finishAndReleaseAll();
            b.finishAndReleaseAll();
        }
    }

    @Test
    void aReadBatchACloseCutShortEndsWithTheConnection() {
        Logging handler = new Logging();
        handler.closeOnRead = true;
        EmbeddedChannel ch = channel(handler);
        ch.writeInbound(MESSAGE); // closed inside the read: EmbeddedChannel fires no channelReadComplete then
        ch.runPendingTasks(); // channelInactive, at the event loop's next pass
        log.info("after");
        assertEquals(List.of(ch.id().asShortText(), "-"), conns());
        assertNull(MDC.get(ConnectionLogContext.CONN), "no field left on the thread after the close");
        ch.finishAndReleaseAll();
    }

    @Test
    void theFieldsComeBackAfterTheLoggingContextLostItsTurboFilters() {
        List<ch.qos.logback.classic.turbo.TurboFilter> before = new ArrayList<>(context.getTurboFilterList());
        context.getTurboFilterList().clear(); // as a reconfiguration does
        try {
            EmbeddedChannel ch = channel(new Logging()); // the next connection installs the filter again
            ch.pipeline().fireChannelRead(MESSAGE);
            assertEquals(List.of(ch.id().asShortText()), conns());
            ch.finishAndReleaseAll();
        } finally {
            context.getTurboFilterList().clear();
            context.getTurboFilterList().addAll(before);
        }
    }

    @Test
    void aReadBatchThatLogsNothingAllocatesNothing() throws Exception {
        double[] perBatch = new double[1];
        // on a thread like an event loop's (FastThreadLocal's fast path), with TRACE asked at every read
        Thread t = new FastThreadLocalThread(() -> {
            Logging handler = new Logging();
            handler.quiet = true;
            EmbeddedChannel ch = channel(handler);
            for (int i = 0; i < BATCHES; i++) { // warm
                batch(ch);
            }
            long before = allocatedBytes();
            for (int i = 0; i < BATCHES; i++) {
                batch(ch);
            }
            perBatch[0] = (double) (allocatedBytes() - before) / BATCHES;
            ch.finishAndReleaseAll();
        });
        t.start();
        t.join();
        // 96 B when the fields went into the MDC at each batch (three map entries), 592 B when put per event
        assertTrue(perBatch[0] <= 1, perBatch[0] + " octets allocated per batch of four reads");
        assertTrue(lines.list.isEmpty(), "nothing logged");
    }

    private static void batch(EmbeddedChannel ch) {
        ch.pipeline().fireChannelRead(MESSAGE).fireChannelRead(MESSAGE).fireChannelRead(MESSAGE)
                .fireChannelRead(MESSAGE).fireChannelReadComplete();
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }
}
