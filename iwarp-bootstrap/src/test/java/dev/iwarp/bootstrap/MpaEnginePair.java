package dev.iwarp.bootstrap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.LlpStream;
import dev.iwarp.mpa.MpaConnectRequest;
import dev.iwarp.mpa.MpaRole;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.testkit.BackToBack;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Two complete iWARP pipelines over MPA, as {@link IwarpPipeline} installs them (MPA startup and
 * framer, the MPA adapter to DDP's lower-layer contract, DDP codec, RDMAP engine), back to back in
 * memory. {@link #pump()} moves octets until both sides are quiet and keeps each direction's octets,
 * so tests can decode exactly what went on the wire.
 */
final class MpaEnginePair {
    final Side initiator;
    final Side responder;
    /** The octets each side sent after the pair was built. */
    final ByteArrayOutputStream fromInitiator = new ByteArrayOutputStream();
    final ByteArrayOutputStream fromResponder = new ByteArrayOutputStream();

    MpaEnginePair(MpaSettings initiatorMpa, MpaSettings responderMpa) {
        this(initiatorMpa, responderMpa, true);
    }

    /**
     * With {@code tap} false no tap sits between the DDP codec and the engine (the engine writes through the
     * MPA adapter's writer either way, so {@link Side#written} stays empty).
     */
    MpaEnginePair(MpaSettings initiatorMpa, MpaSettings responderMpa, boolean tap) {
        this(initiatorMpa, responderMpa, tap, false);
    }

    /**
     * With {@code inboundBelowAdapter} an inbound handler sits between each MPA framer and its adapter, so
     * the framer does not lend ULPDUs (a handler there could keep the buffer) and makes a slice of each.
     */
    MpaEnginePair(MpaSettings initiatorMpa, MpaSettings responderMpa, boolean tap, boolean inboundBelowAdapter) {
        responder = new Side(MpaRole.RESPONDER, responderMpa, tap, inboundBelowAdapter);
        initiator = new Side(MpaRole.INITIATOR, initiatorMpa, tap, inboundBelowAdapter);
        pump();
        fromInitiator.reset();
        fromResponder.reset();
    }

    void pump() {
        BackToBack.pump(initiator.ch, responder.ch, fromInitiator, fromResponder);
    }

    void close() {
        initiator.close();
        responder.close();
    }

    /** One host: device, PD, CQs, engine and channel. */
    static final class Side {
        final RdmaDevice device = new RdmaDevice();
        final ProtectionDomain pd = device.allocPd();
        final CompletionQueue sendCq = new CompletionQueue();
        final CompletionQueue recvCq = new CompletionQueue();
        final RdmaEngine engine = new RdmaEngine(pd, sendCq, recvCq);
        final QueuePair qp = engine.queuePair();
        final List<DdpHeader> written = new ArrayList<>();
        final EmbeddedChannel ch = new EmbeddedChannel();
        private final List<ByteBuf> allocated = new ArrayList<>();

        /** The lower layer the startup announced. */
        LlpStream lower;

        Side(MpaRole role, MpaSettings settings, boolean tap, boolean inboundBelowAdapter) {
            IwarpPipeline.addFraming(ch.pipeline(), role, settings);
            IwarpPipeline.addEngine(ch.pipeline(), engine);
            if (inboundBelowAdapter) {
                ch.pipeline().addBefore(IwarpPipeline.LLP, "below", new ChannelInboundHandlerAdapter());
            }
            if (tap) { // the engine's lower layer, wrapped: every ULPDU written is recorded on its way down
                ch.pipeline().addAfter(IwarpPipeline.DDP, "tap", new ChannelInboundHandlerAdapter() {
                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        LlpStartupEvent e = evt instanceof LlpStartupEvent ? (LlpStartupEvent) evt : null;
                        ctx.fireUserEventTriggered(e != null && e.isSuccess()
                                ? LlpStartupEvent.success(e.parameters(), recording(e.lowerLayer())) : evt);
                    }
                });
            }
            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                    if (evt instanceof MpaConnectRequest) {
                        ((MpaConnectRequest) evt).accept();
                    } else if (evt instanceof LlpStartupEvent && ((LlpStartupEvent) evt).isSuccess()) {
                        lower = ((LlpStartupEvent) evt).lowerLayer();
                    }
                }
            });
        }

        /** {@code lower} with every ULPDU written through it recorded in {@link #written}. */
        private LlpStream recording(LlpStream lower) {
            return new LlpStream() {
                @Override
                public boolean writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
                    ByteBuf copy = Unpooled.copiedBuffer(header, payload);
                    DdpSegment s = DdpCodec.decode(copy);
                    written.add(new DdpHeader(s));
                    s.release();
                    copy.release();
                    return lower.writeUlpdu(header, payload, promise);
                }

                @Override
                public boolean copiesPayload(int headerLength, int payloadLength) {
                    return lower.copiesPayload(headerLength, payloadLength);
                }

                @Override
                public void receiveWith(dev.iwarp.ddp.llp.UlpduReceiver receiver) {
                    lower.receiveWith(receiver);
                }

                @Override
                public int mulpdu() {
                    return lower.mulpdu();
                }

                @Override
                public void closeAfterFlush() {
                    lower.closeAfterFlush();
                }

                @Override
                public String transmitHoldReason() {
                    return lower.transmitHoldReason();
                }
            };
        }

        /** A pooled buffer of {@code size} octets filled with {@code fill}, released at {@link #close()}. */
        ByteBuf buffer(int size, int fill) {
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
            byte[] content = new byte[size];
            Arrays.fill(content, (byte) fill);
            b.writeBytes(content);
            allocated.add(b);
            return b;
        }

        MemoryRegion register(ByteBuf memory, Access... access) {
            return pd.register(memory, access);
        }

        DdpHeader lastWritten() {
            return written.isEmpty() ? null : written.get(written.size() - 1);
        }

        void close() {
            ch.finishAndReleaseAll();
            device.close();
            allocated.forEach(ByteBuf::release);
            allocated.clear();
        }
    }

    /** What the engine wrote: the DDP control octet, RsvdULP (RDMAP's control octet) and short payloads. */
    static final class DdpHeader {
        final int control;
        final int rsvdUlp;
        final int payloadLength;
        final int headerLength;
        /** The payload of a short segment (up to 256 octets), else {@code null}. */
        final byte[] payload;

        DdpHeader(DdpSegment s) {
            control = s.controlOctet();
            rsvdUlp = s.rsvdUlp();
            payloadLength = s.payloadLength();
            headerLength = s.headerLength();
            payload = payloadLength <= 256 ? io.netty.buffer.ByteBufUtil.getBytes(s.content()) : null;
        }

        int opcode() {
            return rsvdUlp & 0x0F;
        }

        int ddpVersion() {
            return control & 0x03;
        }

        int rdmapVersion() {
            return rsvdUlp >>> 6;
        }
    }
}
