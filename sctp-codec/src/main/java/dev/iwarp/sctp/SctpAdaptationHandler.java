package dev.iwarp.sctp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.sctp.SctpMessage;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;

/**
 * Startup of the shim on one association (draft §3.1): learns the peer's Adaptation
 * Layer Indication, decides whether the adaptation runs (draft §3.1's matrix) and whether the ULP accepts the
 * peer's value, starts {@link SctpPlacementCodec}, fires one {@link SctpAdaptationEvent} and removes
 * itself.
 *
 * <ul>
 *   <li>{@link IndicationTransport#NATIVE}: the channel ({@link SctpShimChannel}) read the peer's value
 *       before Netty's first receive; the outcome is known when the channel becomes active.</li>
 *   <li>{@link IndicationTransport#HELLO}: sends our 8-octet hello (stream 0, ordered, PPID 0) when the
 *       channel becomes active and waits for the peer's, holding what arrives meanwhile (I4 beyond
 *       the limits), I1 after the timeout, I3 for a malformed hello.</li>
 *   <li>{@link IndicationTransport#STATIC}: the configured peer value, nothing on the wire.</li>
 * </ul>
 * On I1/I2 nothing is closed here: the event says why, and the ULP closes (our RDMAP binding does,
 * gracefully). I3/I4 abort the association.
 */
public class SctpAdaptationHandler extends ChannelDuplexHandler {
    private static final Logger LOG = LoggerFactory.getLogger(SctpAdaptationHandler.class);
    private static final EnumSet<IndicationTransport> ANNOUNCED = EnumSet.noneOf(IndicationTransport.class);

    private final SctpSettings settings;
    private boolean started;
    private boolean done;
    private ArrayDeque<SctpMessage> early;
    private int earlyBytes;
    private ScheduledFuture<?> timeout;

    public SctpAdaptationHandler(SctpSettings settings) {
        this.settings = settings;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            // added to a live association (e.g. an accepted one, whose pipeline is still being built):
            // start once the handlers after this one are in place; channelActive may come first
            ctx.executor().execute(() -> {
                if (!ctx.isRemoved()) {
                    start(ctx);
                }
            });
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        start(ctx);
        ctx.fireChannelActive();
    }

    private void start(ChannelHandlerContext ctx) {
        if (started) {
            return;
        }
        started = true;
        announce(settings.transport());
        switch (settings.transport()) {
            case STATIC:
                complete(ctx, settings.staticPeerIndication());
                break;
            case NATIVE:
                if (!(ctx.channel() instanceof SctpShimChannel)) {
                    fail(ctx, new SctpAdaptation(settings.localIndication(), null, settings.transport()),
                            new IllegalStateException("the indication cannot be read natively on a "
                                    + ctx.channel().getClass().getSimpleName()
                                    + "; choose the in-band hello or a static peer indication"), false);
                    return;
                }
                long value = ((SctpShimChannel) ctx.channel()).peerIndicationValue();
                complete(ctx, value == SctpShimChannel.NO_INDICATION ? null : SctpIndication.of(value));
                break;
            case HELLO:
                if (settings.localIndication() != null) {
                    ByteBuf hello = ctx.alloc().directBuffer(SctpIndication.PARAMETER_LENGTH);
                    settings.localIndication().writeParameter(hello);
                    ctx.writeAndFlush(new SctpMessage(0, 0, false, hello)); // the fallback Hello: stream 0, ordered, PPID 0
                }
                timeout = ctx.executor().schedule(() -> {
                    if (!done) {
                        noHello(ctx);
                    }
                }, settings.helloTimeoutMillis(), TimeUnit.MILLISECONDS);
                break;
            default:
                throw new AssertionError(settings.transport());
        }
    }

    private void noHello(ChannelHandlerContext ctx) {
        String why = "no Adaptation Hello within " + settings.helloTimeoutMillis() + " ms";
        LOG.warn("{}: {}", ctx.channel(), why);
        fail(ctx, new SctpAdaptation(settings.localIndication(), null, settings.transport()),
                new SctpShimException(SctpShimError.I1, why), false);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (done || settings.transport() != IndicationTransport.HELLO || !(msg instanceof SctpMessage)) {
            ctx.fireChannelRead(msg);
            return;
        }
        SctpMessage m = (SctpMessage) msg;
        ByteBuf content = m.content();
        if (SctpIndication.isParameter(content)) {
            long value = content.getUnsignedInt(content.readerIndex() + 4);
            m.release();
            complete(ctx, SctpIndication.of(value)); // a value outside 1-5 is no indication (draft §2.1 defines 1-5)
            return;
        }
        if (SctpIndication.looksLikeParameter(content)) {
            String hex = ByteBufUtil.hexDump(content, content.readerIndex(), Math.min(16, content.readableBytes()));
            m.release();
            abort(ctx, SctpShimError.I3, "malformed Adaptation Hello (" + content.readableBytes() + " octets: " + hex
                    + ")");
            return;
        }
        if (early == null) {
            early = new ArrayDeque<>();
        }
        early.add(m);
        earlyBytes += content.readableBytes();
        if (early.size() > settings.earlyMessages() || earlyBytes > settings.earlyBytes()) {
            abort(ctx, SctpShimError.I4, early.size() + " messages (" + earlyBytes
                    + " octets) before the peer's Adaptation Hello");
        }
    }

    private void complete(ChannelHandlerContext ctx, SctpIndication peer) {
        SctpAdaptation a = new SctpAdaptation(settings.localIndication(), peer, settings.transport());
        if (peer == null) {
            LOG.info("{}: the peer indicated no DDP/RDMA adaptation: {}", ctx.channel(), a);
            fail(ctx, a, new SctpShimException(SctpShimError.I1, a.toString()), false);
        } else if (!a.enabled()) {
            fail(ctx, a, new SctpShimException(SctpShimError.I1, "we indicated none: " + a), false);
        } else if (!settings.acceptedPeerIndications().contains(peer)) {
            LOG.info("{}: the peer indicated {}, we accept only {}", ctx.channel(), peer,
                    settings.acceptedPeerIndications());
            fail(ctx, a, new SctpShimException(SctpShimError.I2, "peer indicated " + peer + ", accepted: "
                    + settings.acceptedPeerIndications()), false);
        } else {
            SctpPlacementCodec codec = ctx.pipeline().get(SctpPlacementCodec.class);
            if (codec == null) {
                throw new IllegalStateException("no SctpPlacementCodec after the SctpAdaptationHandler");
            }
            codec.start(a);
            LOG.debug("{}: {}", ctx.channel(), a);
            finish(ctx, SctpAdaptationEvent.success(a));
        }
    }

    private void abort(ChannelHandlerContext ctx, SctpShimError error, String what) {
        SctpShimException e = new SctpShimException(error, what);
        LOG.warn("{}: {}; aborting the association", ctx.channel(), e.getMessage());
        fail(ctx, new SctpAdaptation(settings.localIndication(), null, settings.transport()), e, true);
    }

    private void fail(ChannelHandlerContext ctx, SctpAdaptation a, Throwable cause, boolean abort) {
        releaseEarly();
        if (abort) {
            SctpAbort.abort(ctx.channel());
        }
        finish(ctx, SctpAdaptationEvent.failure(a, cause));
    }

    private void finish(ChannelHandlerContext ctx, SctpAdaptationEvent event) {
        done = true;
        if (timeout != null) {
            timeout.cancel(false);
        }
        ArrayDeque<SctpMessage> held = early;
        early = null;
        ctx.fireUserEventTriggered(event);
        if (held != null) {
            held.forEach(ctx::fireChannelRead); // the codec and the AWS sequencer put them in order
            ctx.fireChannelReadComplete();
        }
        if (ctx.pipeline().context(this) != null) {
            ctx.pipeline().remove(this);
        }
    }

    private void releaseEarly() {
        if (early != null) {
            early.forEach(ReferenceCountUtil::release);
            early = null;
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (timeout != null) {
            timeout.cancel(false);
        }
        releaseEarly();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!done && started) {
            fail(ctx, new SctpAdaptation(settings.localIndication(), null, settings.transport()),
                    new SctpShimException(SctpShimError.C12, "association closed before the indications were known"),
                    false);
        }
        ctx.fireChannelInactive();
    }

    /** The log says once per process which way the indication travels (native or
     * fallback), so an operator can tell which one a host supports. */
    private static void announce(IndicationTransport t) {
        synchronized (ANNOUNCED) {
            if (!ANNOUNCED.add(t)) {
                return;
            }
        }
        switch (t) {
            case NATIVE:
                LOG.info("SCTP adaptation: indication in INIT/INIT-ACK parameter 0xC006 (native socket option)");
                break;
            case HELLO:
                LOG.info("SCTP adaptation: indication in an in-band Adaptation Hello (not the draft's wire: "
                        + "a draft peer sees no indication from us)");
                break;
            default:
                LOG.info("SCTP adaptation: indication by static configuration (nothing on the wire)");
        }
    }
}
