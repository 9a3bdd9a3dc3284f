package dev.iwarp.verbs;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.mpa.MpaConnectRequest;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.testkit.Wire;
import dev.iwarp.mpa.MpaStartupHandler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;

import java.util.ArrayList;
import java.util.List;

/**
 * Two complete iWARP pipelines (MPA startup/framer, DDP codec, RDMAP engine) back to back in memory,
 * each on its own software device. {@link #pump()} moves octets until both sides are quiet. Each
 * side records the DDP segments its engine wrote (headers and, for short ones, payload), so tests
 * can assert the exact Terminate on the wire.
 */
final class RdmaPair {
    final Side initiator;
    final Side responder;

    RdmaPair(MpaSettings initiatorMpa, MpaSettings responderMpa) {
        responder = new Side(MpaStartupHandler.responder(responderMpa));
        initiator = new Side(MpaStartupHandler.initiator(initiatorMpa));
        pump();
    }

    RdmaPair() {
        this(MpaSettings.defaults(), MpaSettings.defaults());
    }

    void pump() {
        for (int round = 0; round < 100_000; round++) {
            initiator.ch.runPendingTasks();
            responder.ch.runPendingTasks();
            boolean moved = Wire.move(initiator.ch, responder.ch, null) | Wire.move(responder.ch, initiator.ch, null);
            if (!moved) {
                // a side that closed has sent its FIN: once its octets are delivered, the peer sees the close
                if (initiator.ch.isOpen() != responder.ch.isOpen()) {
                    (initiator.ch.isOpen() ? initiator.ch : responder.ch).close();
                    continue;
                }
                return;
            }
        }
        throw new AssertionError("pair did not settle");
    }

    void close() {
        initiator.ch.finishAndReleaseAll();
        responder.ch.finishAndReleaseAll();
        initiator.device.close();
        responder.device.close();
        initiator.releaseMemory();
        responder.releaseMemory();
    }

    /** One host: device, PD, CQs, engine and channel. */
    static final class Side {
        final RdmaDevice device = new RdmaDevice();
        final ProtectionDomain pd = device.allocPd();
        final CompletionQueue sendCq = new CompletionQueue();
        final CompletionQueue recvCq = new CompletionQueue();
        final RdmaEngine engine = new RdmaEngine(pd, sendCq, recvCq);
        final QueuePair qp = engine.queuePair();
        final List<Recorded> written = new ArrayList<>();
        final List<ByteBuf> allocated = new ArrayList<>();
        final EmbeddedChannel ch;

        Side(MpaStartupHandler mpa) {
            ch = new EmbeddedChannel(mpa, new DdpCodec(), new Tap(written), engine, new ChannelInboundHandlerAdapter() {
                @Override
                public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                    if (evt instanceof MpaConnectRequest) {
                        ((MpaConnectRequest) evt).accept();
                    }
                }
            });
        }

        /** A pooled buffer of {@code size} octets filled with {@code fill}, released at {@link #close()}. */
        ByteBuf buffer(int size, int fill) {
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
            byte[] content = new byte[size];
            java.util.Arrays.fill(content, (byte) fill);
            b.writeBytes(content); // one access: the paranoid leak detector records every access
            allocated.add(b);
            return b;
        }

        MemoryRegion register(ByteBuf memory, Access... access) {
            return pd.register(memory, access);
        }

        void releaseMemory() {
            allocated.forEach(ByteBuf::release);
            allocated.clear();
        }

        Recorded lastWritten() {
            return written.isEmpty() ? null : written.get(written.size() - 1);
        }
    }

    /** What the engine wrote: the DDP header fields and a copy of a short payload. */
    static final class Recorded {
        final boolean tagged;
        final boolean last;
        final int rsvdUlp;
        final byte[] header;
        final byte[] payload;
        final int payloadLength;

        Recorded(DdpSegment s) {
            tagged = s.isTagged();
            last = s.isLast();
            rsvdUlp = s.rsvdUlp();
            ByteBuf h = PooledByteBufAllocator.DEFAULT.heapBuffer(18);
            s.encodeHeader(h);
            header = new byte[h.readableBytes()];
            h.readBytes(header);
            h.release();
            payloadLength = s.payloadLength();
            if (payloadLength <= 256) {
                payload = new byte[payloadLength];
                s.content().getBytes(s.content().readerIndex(), payload);
            } else {
                payload = null;
            }
        }

        int opcode() {
            return rsvdUlp & 0x0F;
        }
    }

    private static final class Tap extends ChannelOutboundHandlerAdapter {
        private final List<Recorded> written;

        Tap(List<Recorded> written) {
            this.written = written;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof DdpSegment) {
                written.add(new Recorded((DdpSegment) msg));
            }
            ctx.write(msg, promise);
        }
    }
}
