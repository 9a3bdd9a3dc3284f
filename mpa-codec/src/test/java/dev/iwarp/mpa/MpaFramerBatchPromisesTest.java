package dev.iwarp.mpa;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultPromise;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A batch of small FPDUs written with several real promises (a burst of small Read Responses) completes them
 * through one listener per framer, not a notifier object per batch; in the order written, with the batch's
 * outcome, also when the channel reports the batches out of order or a completion writes another batch.
 */
class MpaFramerBatchPromisesTest {
    private static final int BATCHES = 100;

    /** Below the framer: keeps each batch's promise (and the listener it carries) until told to complete it. */
    private static final class Held extends ChannelOutboundHandlerAdapter {
        final List<ChannelPromise> promises = new ArrayList<>();
        final Map<Object, Boolean> listeners = new IdentityHashMap<>();

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ReferenceCountUtil.release(msg);
            if (promise.isVoid()) {
                return;
            }
            listeners.put(listenerOf(promise), Boolean.TRUE);
            promises.add(promise);
        }
    }

    /** The one listener a promise carries (DefaultPromise keeps a first listener in a field of its own). */
    private static Object listenerOf(ChannelPromise promise) {
        try {
            Field f = DefaultPromise.class.getDeclaredField("listener");
            f.setAccessible(true);
            return f.get(promise);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("Netty's DefaultPromise has no field 'listener' any more", e);
        }
    }

    private static ChannelPromise writeSmall(EmbeddedChannel ch, MpaFramer framer, List<ChannelPromise> order) {
        ChannelPromise p = ch.newPromise();
        framer.writeUlpdu(Unpooled.wrappedBuffer(new byte[18]), Unpooled.buffer(64).writeZero(64), p);
        if (order != null) {
            p.addListener(f -> order.add(p));
        }
        return p;
    }

    @Test
    void oneListenerCompletesEveryBatchsPromises() {
        Held below = new Held();
        MpaFramer framer = new MpaFramer(true, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel ch = channel(below, framer);
        List<ChannelPromise> each = new ArrayList<>();
        for (int b = 0; b < BATCHES; b++) {
            for (int i = 0; i < 3; i++) {
                each.add(writeSmall(ch, framer, null));
            }
            ch.flush();
        }
        assertEquals(BATCHES, below.promises.size(), "one write below per batch of three FPDUs");
        // before: a PromiseNotifier per batch (100 listeners)
        assertEquals(1, below.listeners.size(), "listeners of " + BATCHES + " batches' promises");
        assertNotNull(below.listeners.keySet().iterator().next());
        below.promises.forEach(ChannelPromise::setSuccess);
        assertTrue(each.stream().allMatch(ChannelPromise::isSuccess), "every FPDU's promise completed");
        assertFalse(ch.finish());
    }

    @Test
    void promisesCompleteInOrderWithTheirBatchsOutcome() {
        Held below = new Held();
        MpaFramer framer = new MpaFramer(true, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel ch = channel(below, framer);
        List<ChannelPromise> order = new ArrayList<>();
        List<ChannelPromise> written = new ArrayList<>();
        for (int b = 0; b < 3; b++) {
            for (int i = 0; i < 2; i++) {
                written.add(writeSmall(ch, framer, order));
            }
            ch.flush();
        }
        IOException failure = new IOException("test: the second batch's write failed");
        below.promises.get(1).setFailure(failure); // reported before the first: waits for it
        assertTrue(order.isEmpty(), "nothing completes before the first batch does");
        below.promises.get(0).setSuccess();
        assertEquals(written.subList(0, 4), order, "the first batch's promises, then the second's, in order");
        assertTrue(written.get(0).isSuccess() && written.get(1).isSuccess());
        assertSame(failure, written.get(2).cause());
        assertSame(failure, written.get(3).cause());
        below.promises.get(2).setSuccess();
        assertEquals(written, order);
        assertFalse(ch.finish());
    }

    @Test
    void aCompletionThatWritesAnotherBatchIsSafe() {
        Held below = new Held();
        MpaFramer framer = new MpaFramer(true, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel ch = channel(below, framer);
        List<ChannelPromise> order = new ArrayList<>();
        List<ChannelPromise> later = new ArrayList<>();
        ChannelPromise first = writeSmall(ch, framer, order);
        first.addListener(f -> { // as an IRD slot freed lets the engine send the next Read Responses
            for (int i = 0; i < 20; i++) { // more promises than the queues hold at first
                later.add(writeSmall(ch, framer, order));
            }
            ch.flush();
            for (int k = below.promises.size() - 1; k > 0; k--) { // reported at once, re-entering, last first
                below.promises.get(k).setSuccess();
            }
        });
        ChannelPromise second = writeSmall(ch, framer, order);
        ch.flush();
        below.promises.get(0).setSuccess();
        List<ChannelPromise> expected = new ArrayList<>(List.of(first, second));
        expected.addAll(later);
        assertEquals(expected, order, "every promise once, in the order written");
        assertFalse(ch.finish());
    }

    /**
     * The framer below {@code below}, after a burst of void writes: its batches then hold every FPDU up to a flush
     * (the first batches of a connection hold one, two, four... FPDUs).
     */
    private static EmbeddedChannel channel(Held below, MpaFramer framer) {
        EmbeddedChannel ch = new EmbeddedChannel(below, framer);
        for (int i = 0; i < 200; i++) {
            framer.writeUlpdu(Unpooled.wrappedBuffer(new byte[18]), Unpooled.buffer(64).writeZero(64), ch.voidPromise());
        }
        ch.flush();
        return ch;
    }
}
