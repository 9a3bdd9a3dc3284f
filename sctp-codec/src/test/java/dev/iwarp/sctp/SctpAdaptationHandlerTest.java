package dev.iwarp.sctp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.sctp.SctpMessage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.iwarp.sctp.SctpIndication.RDMA_AND_NEGOTIATION;
import static dev.iwarp.sctp.SctpVectors.bytes;
import static dev.iwarp.sctp.SctpVectors.readable;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SctpAdaptationHandler}: the §3 enabling matrix (every local x peer indication, with the ULP's
 * acceptance), each way the indication travels (native value read by the channel, static, in-band
 * hello: both orders, data overtaking the hello, timeout, malformed, second hello, too much early data).
 */
class SctpAdaptationHandlerTest {

    /** Records the adaptation event and what is delivered after it. */
    static final class Top extends ChannelInboundHandlerAdapter {
        SctpAdaptationEvent event;
        final List<PlacementChunk> chunks = new ArrayList<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof SctpAdaptationEvent) {
                event = (SctpAdaptationEvent) evt;
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            chunks.add((PlacementChunk) msg);
        }

        void release() {
            chunks.forEach(PlacementChunk::release);
        }
    }

    private static ShimChannels.Channel shim(SctpSettings s, Top top) {
        return new ShimChannels.Channel(new SctpAdaptationHandler(s), new SctpPlacementCodec(s), new AwsSequencer(s), top);
    }

    private static final SctpIndication[] NONE_AND_ALL = {null, SctpIndication.DDP, SctpIndication.DDP_WITH_TAG,
        SctpIndication.RDMA_ONLY, SctpIndication.RDMA_AND_NEGOTIATION, SctpIndication.RDMA_NEGOTIATION};

    @Test
    void enablingMatrixStaticAndNative() {
        for (boolean nativeWay : new boolean[] {false, true}) {
            for (SctpIndication local : NONE_AND_ALL) {
                for (SctpIndication peer : NONE_AND_ALL) {
                    SctpSettings.Builder b = SctpSettings.builder().localIndication(local)
                            .acceptPeer(SctpIndication.RDMA_AND_NEGOTIATION, SctpIndication.DDP_WITH_TAG);
                    SctpSettings s = nativeWay ? b.transport(IndicationTransport.NATIVE).build() : b.staticPeer(peer).build();
                    Top top = new Top();
                    ShimChannels.Channel ch = new ShimChannels.Channel();
                    ch.peerIndication = peer == null ? SctpShimChannel.NO_INDICATION : peer.value();
                    ch.pipeline().addFirst(new SctpAdaptationHandler(s), new SctpPlacementCodec(s), top);
                    ch.runPendingTasks();
                    String cell = (nativeWay ? "native " : "static ") + "local " + local + " peer " + peer;
                    assertTrue(top.event != null, cell);
                    boolean enabled = local != null && peer != null;
                    boolean accepted = peer == SctpIndication.RDMA_AND_NEGOTIATION || peer == SctpIndication.DDP_WITH_TAG;
                    assertEquals(enabled && accepted, top.event.isSuccess(), cell);
                    assertEquals(enabled, top.event.adaptation().enabled(), cell);
                    if (!top.event.isSuccess()) {
                        SctpShimError e = ((SctpShimException) top.event.cause()).error();
                        assertEquals(enabled ? SctpShimError.I2 : SctpShimError.I1, e, cell);
                        assertEquals(0, ch.aborts, cell + ": I1/I2 leave the close to the ULP");
                    } else {
                        assertEquals(peer, top.event.adaptation().peer(), cell);
                        assertEquals(local, ch.pipeline().get(SctpPlacementCodec.class).adaptation().local(), cell);
                    }
                    assertNull(ch.pipeline().get(SctpAdaptationHandler.class), cell + ": removed itself");
                    assertFalse(ch.finish(), cell);
                }
            }
        }
    }

    @Test
    void nativeOnAChannelThatCannotReadItFails() {
        Top top = new Top();
        EmbeddedChannel ch = new EmbeddedChannel(new SctpAdaptationHandler(SctpSettings.defaults()),
                new SctpPlacementCodec(SctpSettings.defaults()), top);
        ch.runPendingTasks();
        assertFalse(top.event.isSuccess());
        assertInstanceOf(IllegalStateException.class, top.event.cause());
        assertFalse(ch.finish());
    }

    private static SctpSettings hello() {
        return SctpSettings.builder().transport(IndicationTransport.HELLO).build();
    }

    private static SctpMessage helloFrom(int value) {
        return new SctpMessage(0, 0, false, Unpooled.buffer(8).writeInt(0xC0060008).writeInt(value));
    }

    @Test
    void helloSentFirstThenPeersHelloEnables() {
        Top top = new Top();
        ShimChannels.Channel ch = shim(hello(), top);
        SctpMessage ours = ch.readOutbound();
        assertArrayEquals(bytes(SctpVectors.PARAMETERS[3]), readable(ours.content()));
        assertEquals(0, ours.streamIdentifier());
        assertEquals(0, ours.protocolIdentifier());
        assertFalse(ours.isUnordered(), "hello is ordered (§12.4)");
        ours.release();
        assertNull(top.event);
        ch.writeInbound(helloFrom(4));
        assertTrue(top.event.isSuccess());
        assertEquals(IndicationTransport.HELLO, top.event.adaptation().transport());
        ch.writeInbound(SctpVectors.message(bytes(SctpVectors.S1)));
        assertEquals(1, top.chunks.size());
        top.release();
        assertFalse(ch.finish());
    }

    @Test
    void dataOvertakingTheHelloIsHeldThenDeliveredInAwsOrder() {
        Top top = new Top();
        ShimChannels.Channel ch = shim(hello(), top);
        ((SctpMessage) ch.readOutbound()).release();
        ch.writeInbound(SctpVectors.message(bytes(SctpVectors.S2)));
        ch.writeInbound(SctpVectors.message(bytes(SctpVectors.S1)));
        assertTrue(top.chunks.isEmpty());
        ch.writeInbound(helloFrom(4));
        assertTrue(top.event.isSuccess());
        assertEquals(2, top.chunks.size());
        assertEquals(1, top.chunks.get(0).aws());
        assertEquals(2, top.chunks.get(1).aws());
        top.release();
        assertFalse(ch.finish());
    }

    @Test
    void helloWithAnUnknownValueIsNoIndication() {
        Top top = new Top();
        ShimChannels.Channel ch = shim(hello(), top);
        ((SctpMessage) ch.readOutbound()).release();
        ch.writeInbound(helloFrom(6));
        assertEquals(SctpShimError.I1, ((SctpShimException) top.event.cause()).error());
        assertFalse(ch.finish());
    }

    @Test
    void noHelloWithinTheTimeoutIsI1() {
        Top top = new Top();
        SctpSettings s = hello().toBuilder().helloTimeoutMillis(500).build();
        ShimChannels.Channel ch = ShimChannels.Channel.frozen(new SctpAdaptationHandler(s), new SctpPlacementCodec(s),
                new AwsSequencer(s), top);
        ((SctpMessage) ch.readOutbound()).release();
        ch.writeInbound(SctpVectors.message(bytes(SctpVectors.S1)));
        ch.advanceTimeBy(499, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertNull(top.event);
        ch.advanceTimeBy(1, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertEquals(SctpShimError.I1, ((SctpShimException) top.event.cause()).error());
        assertTrue(top.chunks.isEmpty());
        assertFalse(ch.finish());
    }

    @Test
    void malformedHelloIsI3AndAborts() {
        Top top = new Top();
        ShimChannels.Channel ch = shim(hello(), top);
        ((SctpMessage) ch.readOutbound()).release();
        ch.writeInbound(new SctpMessage(0, 0, false, Unpooled.wrappedBuffer(bytes("c0 06 00 0c 00 00 00 04 00 00 00 00"))));
        assertEquals(SctpShimError.I3, ((SctpShimException) top.event.cause()).error());
        assertEquals(1, ch.aborts);
        assertFalse(ch.finish());
    }

    @Test
    void secondHelloIsI3() {
        Top top = new Top();
        ShimChannels.Channel ch = shim(hello(), top);
        ((SctpMessage) ch.readOutbound()).release();
        ch.writeInbound(helloFrom(4));
        ch.writeInbound(helloFrom(4));
        assertEquals(SctpShimError.I3, ch.errors.only());
        assertEquals(1, ch.aborts);
        assertFalse(ch.finish());
    }

    @Test
    void tooMuchBeforeTheHelloIsI4() {
        Top top = new Top();
        SctpSettings s = hello().toBuilder().earlyLimits(3, 1 << 20).build();
        ShimChannels.Channel ch = shim(s, top);
        ((SctpMessage) ch.readOutbound()).release();
        List<ByteBuf> sent = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            SctpMessage m = SctpVectors.message(bytes(SctpVectors.S1));
            sent.add(m.content());
            ch.writeInbound(m);
        }
        assertEquals(SctpShimError.I4, ((SctpShimException) top.event.cause()).error());
        assertEquals(1, ch.aborts);
        for (ByteBuf b : sent) {
            assertEquals(0, b.refCnt(), "held messages released");
        }
        assertFalse(ch.finish());
    }
}
