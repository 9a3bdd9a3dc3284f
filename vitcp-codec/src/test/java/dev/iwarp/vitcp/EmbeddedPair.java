package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Two {@link EmbeddedChannel}s wired back to back like the two ends of a TCP connection: {@link #pump()} moves the
 * bytes each end wrote into the other until both are quiet; a close on one end closes the other after its bytes
 * were delivered (a TCP FIN). Deterministic, single threaded.
 */
final class EmbeddedPair implements AutoCloseable {
    final EmbeddedChannel a;
    final EmbeddedChannel b;
    /** Every buffer that went from a to b, as hex (for wire assertions), when recording. */
    final List<String> aToB = new ArrayList<>();
    final List<String> bToA = new ArrayList<>();
    boolean record;
    /** Applied to each buffer going from a to b (e.g. to corrupt one); owns and returns the buffer. */
    java.util.function.UnaryOperator<ByteBuf> aToBFilter = java.util.function.UnaryOperator.identity();
    java.util.function.UnaryOperator<ByteBuf> bToAFilter = java.util.function.UnaryOperator.identity();
    /** When positive, what one end writes reaches the other in reads of at most this many octets (as TCP may cut it). */
    int chunk;

    /** Both ends' timers run on this clock alone: it moves only in {@link #advanceTime}, however loaded the machine. */
    private final MockTicker clock = Ticker.newMockTicker();

    EmbeddedPair(ChannelHandler[] aHandlers, ChannelHandler[] bHandlers) {
        a = EmbeddedChannel.builder().ticker(clock).handlers(aHandlers).build();
        b = EmbeddedChannel.builder().ticker(clock).handlers(bHandlers).build();
    }

    /** Moves bytes until neither side has anything to send; returns the number of buffers moved. */
    int pump() {
        int moved = 0;
        boolean progress = true;
        while (progress) {
            progress = false;
            a.runPendingTasks();
            b.runPendingTasks();
            progress |= transfer(a, b, aToB) > 0;
            progress |= transfer(b, a, bToA) > 0;
            if (!a.isOpen() && b.isOpen()) {
                b.close();
                progress = true;
            }
            if (!b.isOpen() && a.isOpen()) {
                a.close();
                progress = true;
            }
            if (progress) {
                moved++;
            }
        }
        return moved;
    }

    private int transfer(EmbeddedChannel from, EmbeddedChannel to, List<String> log) {
        int n = 0;
        Object m;
        while ((m = from.readOutbound()) != null) {
            n++;
            ByteBuf buf = (from == a ? aToBFilter : bToAFilter).apply((ByteBuf) m);
            if (record) {
                // whole buffer up to 256 octets, else its first 64 (one bulk read: cheap under paranoid leak checks)
                int headLength = buf.readableBytes() <= 256 ? buf.readableBytes() : 64;
                byte[] head = new byte[headLength];
                buf.getBytes(buf.readerIndex(), head);
                log.add(java.util.HexFormat.of().formatHex(head));
            }
            if (to.isOpen() && chunk > 0) {
                while (buf.readableBytes() > chunk && to.isOpen()) {
                    to.writeInbound(buf.readRetainedSlice(chunk));
                }
                if (to.isOpen()) {
                    to.writeInbound(buf);
                } else {
                    ReferenceCountUtil.release(buf);
                }
            } else if (to.isOpen()) {
                to.writeInbound(buf);
            } else {
                ReferenceCountUtil.release(buf);
            }
        }
        return n;
    }

    void advanceTime(long millis) {
        clock.advance(millis, TimeUnit.MILLISECONDS);
        a.runScheduledPendingTasks();
        b.runScheduledPendingTasks();
        pump();
    }

    @Override
    public void close() {
        pump();
        a.finishAndReleaseAll();
        b.finishAndReleaseAll();
    }
}
