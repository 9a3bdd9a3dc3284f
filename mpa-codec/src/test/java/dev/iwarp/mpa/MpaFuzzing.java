package dev.iwarp.mpa;

import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;

/** What the MPA fuzz targets share: the typed errors, the application end, draining. */
final class MpaFuzzing {
    private MpaFuzzing() {
    }

    static final List<Class<? extends Throwable>> TYPED =
            List.of(MpaException.class, MpaRejectedException.class, ClosedChannelException.class);

    /** The octets a framer with these settings sends for {@code ulpdus}. */
    static byte[] frame(List<byte[]> ulpdus, boolean crc, boolean markers, TrackingAllocator alloc) {
        EmbeddedChannel tx = new EmbeddedChannel();
        tx.config().setAllocator(alloc);
        tx.pipeline().addLast(new MpaFramer(crc, markers, false, 0xFFFF, 1024, false));
        for (byte[] u : ulpdus) {
            tx.writeOutbound(alloc.heapBuffer(u.length).writeBytes(u));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object o; (o = tx.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            b.release();
            out.writeBytes(a);
        }
        tx.finishAndReleaseAll();
        return out.toByteArray();
    }

    /** Closes and releases everything; a write the handler failed at the close is typed too. */
    static void finish(EmbeddedChannel ch) {
        try {
            ch.finishAndReleaseAll();
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, TYPED);
            ch.releaseInbound();
            ch.releaseOutbound();
        }
    }

    static void drain(EmbeddedChannel ch) {
        ch.runPendingTasks();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            io.netty.util.ReferenceCountUtil.release(o);
        }
    }

    /** The application: accepts or rejects the Request, keeps ULPDUs (copied, released) and errors. */
    static final class App extends ChannelInboundHandlerAdapter {
        final boolean reject;
        final List<byte[]> received = new ArrayList<>();
        final List<Throwable> exceptions = new ArrayList<>();
        MpaStartupCompletionEvent completion;

        App(boolean reject) {
            this.reject = reject;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaConnectRequest) {
                MpaConnectRequest r = (MpaConnectRequest) evt;
                if (reject) {
                    r.reject(new byte[] {9});
                } else {
                    r.accept(new byte[] {7, 7});
                }
            } else if (evt instanceof MpaStartupCompletionEvent) {
                if (completion != null) {
                    throw new AssertionError("two completion events");
                }
                completion = (MpaStartupCompletionEvent) evt;
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                byte[] a = new byte[b.readableBytes()];
                b.getBytes(b.readerIndex(), a);
                received.add(a);
            } finally {
                b.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            exceptions.add(cause);
        }
    }
}
