package dev.iwarp.ift;

import dev.iwarp.testkit.ChannelOctets;
import dev.iwarp.ift.IftTestUtil.Recorder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * Two IFT endpoints back to back in memory, like a TCP connection: {@link #pump()} moves each side's
 * outbound octets to the other side's inbound until both are quiet, recording every octet sent each
 * way; a side that closed makes the other see its FIN. An optional tamperer rewrites what A sends
 * before B sees it (hostile or broken peers).
 */
final class IftPair {
    final EmbeddedChannel a;
    final EmbeddedChannel b;
    final IftAdaptionHandler aIft;
    final IftAdaptionHandler bIft;
    final Recorder aApp = new Recorder();
    final Recorder bApp = new Recorder();
    final ByteArrayOutputStream aToB = new ByteArrayOutputStream();
    final ByteArrayOutputStream bToA = new ByteArrayOutputStream();
    UnaryOperator<byte[]> tamperAToB = UnaryOperator.identity();

    IftPair(IftAdaptionHandler aIft, IftAdaptionHandler bIft) {
        this.aIft = aIft;
        this.bIft = bIft;
        b = frozen(bIft, bApp);
        a = frozen(aIft, aApp);
    }

    IftPair(IftSettings aSettings, IftSettings bSettings) {
        this(IftAdaptionHandler.nodeA(aSettings), IftAdaptionHandler.nodeB(bSettings));
    }

    /** A channel whose clock stands still until {@link #advance}: timeouts to the millisecond. */
    private static EmbeddedChannel frozen(IftAdaptionHandler ift, Recorder app) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.pipeline().addLast(ift, app);
        return ch;
    }

    /** Shuttles octets both ways until neither side has anything more to send; delivers FINs. */
    IftPair pump() {
        for (int round = 0; round < 1000; round++) {
            a.runPendingTasks();
            b.runPendingTasks();
            boolean moved = move(a, b, aToB, tamperAToB);
            moved |= move(b, a, bToA, UnaryOperator.identity());
            if (!moved) {
                if (!a.isOpen() && b.isOpen()) {
                    b.close();
                } else if (!b.isOpen() && a.isOpen()) {
                    a.close();
                } else {
                    return this;
                }
            }
        }
        throw new AssertionError("pair did not settle");
    }

    private static boolean move(EmbeddedChannel from, EmbeddedChannel to, ByteArrayOutputStream log,
                                UnaryOperator<byte[]> tamper) {
        boolean moved = false;
        for (;;) {
            ByteBuf buf = from.readOutbound();
            if (buf == null) {
                return moved;
            }
            moved = true;
            byte[] octets = ChannelOctets.bytes(buf);
            buf.release();
            log.writeBytes(octets);
            byte[] delivered = tamper.apply(octets);
            if (to.isOpen() && delivered.length > 0) {
                to.writeInbound(Unpooled.wrappedBuffer(delivered));
            }
        }
    }

    /** Advances both sides' clocks and runs what became due. */
    IftPair advance(long millis) {
        a.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
        b.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
        a.runScheduledPendingTasks();
        b.runScheduledPendingTasks();
        return this;
    }

    void finish() {
        a.finishAndReleaseAll();
        b.finishAndReleaseAll();
    }
}
