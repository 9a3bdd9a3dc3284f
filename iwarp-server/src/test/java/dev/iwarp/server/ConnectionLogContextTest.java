package dev.iwarp.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A connection's MDC fields while its pipeline handles events, put once per read batch. */
class ConnectionLogContextTest {
    private static final int BATCHES = 20_000;
    private static final Object MESSAGE = new Object();

    /** Records the MDC's conn field at each read and read-complete; closes on a read when asked. */
    private static final class Seen extends ChannelInboundHandlerAdapter {
        final List<String> conns = new ArrayList<>();
        boolean record = true;
        boolean closeOnRead;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (record) {
                conns.add(MDC.get(ConnectionLogContext.CONN));
            }
            if (closeOnRead) {
                ctx.close();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (record) {
                conns.add(MDC.get(ConnectionLogContext.CONN));
            }
        }
    }

    private static EmbeddedChannel channel(Seen seen) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ConnectionLogContext.install(ch, "iwarp");
        ch.pipeline().addLast(seen);
        return ch;
    }

    @Test
    void readsAndTheirCompletionCarryTheFieldsAndTheMdcIsRestoredAfter() {
        Seen seen = new Seen();
        EmbeddedChannel ch = channel(seen);
        String id = ch.id().asShortText();
        MDC.put(ConnectionLogContext.CONN, "outer");
        try {
            ch.pipeline().fireChannelRead(MESSAGE).fireChannelRead(MESSAGE).fireChannelReadComplete();
            assertEquals(List.of(id, id, id), seen.conns);
            assertEquals("outer", MDC.get(ConnectionLogContext.CONN), "what the MDC held before");
            assertNull(MDC.get(ConnectionLogContext.PEER));
        } finally {
            MDC.remove(ConnectionLogContext.CONN);
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aReadBatchACloseCutShortEndsWithTheConnection() {
        Seen seen = new Seen();
        seen.closeOnRead = true;
        EmbeddedChannel ch = channel(seen);
        ch.writeInbound(MESSAGE); // closed inside the read: EmbeddedChannel fires no channelReadComplete then
        ch.runPendingTasks(); // channelInactive, at the event loop's next pass
        assertEquals(List.of(ch.id().asShortText()), seen.conns);
        assertNull(MDC.get(ConnectionLogContext.CONN), "no field left on the thread after the close");
        ch.finishAndReleaseAll();
    }

    @Test
    void aReadBatchPutsTheFieldsOnce() {
        Seen seen = new Seen();
        seen.record = false;
        EmbeddedChannel ch = channel(seen);
        for (int i = 0; i < BATCHES; i++) { // warm
            batch(ch);
        }
        long before = allocatedBytes();
        for (int i = 0; i < BATCHES; i++) {
            batch(ch);
        }
        double perBatch = (double) (allocatedBytes() - before) / BATCHES;
        // per event: a lambda and the MDC's three entries made again (it removes keys that were absent before),
        // 5 x about 112 B for this batch of four reads; once per batch: the three entries
        assertTrue(perBatch <= 128, perBatch + " octets allocated per batch of four reads");
        ch.finishAndReleaseAll();
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
