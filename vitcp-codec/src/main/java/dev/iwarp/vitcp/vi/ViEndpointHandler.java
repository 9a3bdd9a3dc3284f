package dev.iwarp.vitcp.vi;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.PeerAddress;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.ViRemoteErrorCode;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpCodec;
import dev.iwarp.vitcp.VitcpConnection;
import dev.iwarp.vitcp.VitcpProtocolException;
import dev.iwarp.vitcp.VitcpProtocolException.Violation;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;

/**
 * Full-operation handler of a connected VI: data transfer per draft-dicecco-vitcp-01 §2.2.2.2.3 and §3.2-§3.6.
 * Segments messages to the agreed MTU, interleaves RDMA Read Response segments with other messages, reassembles
 * the peer's messages into receive descriptors and registered memory, keeps descriptor flow control, Message ACK
 * and Remote Error Code, and applies the CRC error rules per reliability level. All state is confined to the
 * channel's event loop; {@link ViEndpoint} hands calls from other threads over.
 *
 * <p>The handler is the thin owner, as Linux siw splits a QP into qp, qp_tx and qp_rx: {@link ViTransmitter} sends
 * (segmenting, Read Responses, flow control, transmit completions), {@link ViReceiver} receives (reassembly,
 * placement, message order, CRC errors); the handler routes the channel's events to them and breaks the VI.
 */
final class ViEndpointHandler extends ChannelDuplexHandler {
    private static final Logger log = LoggerFactory.getLogger(ViEndpointHandler.class);
    /** Why the VI ended when its TCP connection closed and nothing said why before (the peer, or a handler below). */
    static final String CLOSED = "TCP connection closed";

    private final ViEndpoint endpoint;
    private final VitcpConnection conn;
    private final int mtu;
    private final boolean reliableReception;
    private final ViTransmitter tx;
    private final ViReceiver rx;
    private ChannelHandlerContext ctx;
    private boolean failed;

    ViEndpointHandler(ViEndpoint endpoint, VitcpConnection conn) {
        this.endpoint = endpoint;
        this.conn = conn;
        this.mtu = conn.mtu();
        this.reliableReception = conn.reliabilityLevel() == ViReliabilityLevel.RELIABLE_RECEPTION;
        this.tx = new ViTransmitter(this, endpoint.protectionDomain());
        this.rx = new ViReceiver(this, endpoint);
    }

    ChannelHandlerContext context() {
        return ctx;
    }

    VitcpConnection connection() {
        return conn;
    }

    ViTransmitter tx() {
        return tx;
    }

    ViReceiver rx() {
        return rx;
    }

    /** Whether the VI runs at Reliable Reception: segments carry Message ACKs (§3.2). */
    boolean reliableReception() {
        return reliableReception;
    }

    /** Whether the VI is broken: nothing more is sent or received, every descriptor completes flushed. */
    boolean isFailed() {
        return failed;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        rx.attach(endpoint.attach(this));
        // payloads go straight into place once their segment's headers are checked: read from the socket there
        // when the channel's allocator can be steered (the provider installs one)
        VitcpCodec codec = ctx.pipeline().get(VitcpCodec.class);
        if (codec != null) {
            codec.receiveWith(rx.placement());
            if (ctx.channel().config().getRecvByteBufAllocator() instanceof DirectReadAllocator d) {
                codec.readDirectlyWith(d);
            }
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        VitcpCodec codec = ctx.pipeline().get(VitcpCodec.class);
        if (codec != null) {
            codec.readDirectlyWith(null);
            codec.receiveWith(null);
        }
    }

    // =================================================================== API entry points (event loop)

    void postRecv(ViRecvRequest r) {
        rx.takePosted(); // receives posted earlier from other threads keep their place
        rx.postRecv(r);
    }

    void postRecvFromAnyThread(ViRecvRequest r) {
        rx.postRecvFromAnyThread(r);
    }

    void takePostedRecvs() {
        rx.takePosted();
    }

    void postSend(ViSendRequest r) {
        tx.postSend(r);
    }

    void disconnect() {
        fail("local disconnect", 0, 0, ViStatus.FLUSHED);
    }

    // =================================================================== events

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            tx.pump();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ViSegment s)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            if (!failed) {
                receive(s);
            }
        } catch (VitcpProtocolException e) {
            protocolViolation(e, s.messageNumber());
        } finally {
            ReferenceCountUtil.release(s);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        tx.pump();
        ctx.fireChannelReadComplete();
    }

    /** Routes a segment: what every segment carries to the transmit half (§3.2), the message to the receive half. */
    private void receive(ViSegment s) {
        ViSegmentType type = s.type();
        if (type.carriesCeHeader() || type.optionalTrailer()) {
            throw new VitcpProtocolException(Violation.UNEXPECTED_SEGMENT, "peer sent " + type + " while Connected");
        }
        int len = s.content().readableBytes();
        if (len > mtu) {
            throw new VitcpProtocolException(Violation.SEGMENT_TOO_LARGE,
                    "peer sent " + len + " payload octets, agreed MTU " + mtu);
        }
        if (s.crcError()) {
            rx.crcError(s);
            return;
        }
        // every segment carries Rx Descriptors Posted and (at Reliable Reception) Message ACK, §3.2
        tx.peerRxPosted(s.rxDescriptorsPosted());
        if (reliableReception) {
            tx.messageAck(s.messageAck(), ViRemoteErrorCode.viErrorType(s.remoteErrorCode()));
            if (failed) {
                return;
            }
        }
        switch (type) {
            case NOP -> { }
            case SEND, RDMA_WRITE -> rx.messageSegment(s, false);
            case RDMA_READ_REQUEST -> rx.readRequest(s);
            case RDMA_READ_RESPONSE -> rx.readResponse(s, false);
            default -> throw new IllegalStateException(type.name());
        }
    }

    // =================================================================== errors

    private void protocolViolation(VitcpProtocolException e, int messageNumber) {
        log.warn("VI/TCP {}: {}; closing", PeerAddress.of(ctx), e.getMessage());
        fail(e.getMessage(), e.viErrorType(), messageNumber, ViStatus.FLUSHED);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof VitcpProtocolException e) {
            protocolViolation(e, rx.lastGoodMessage());
        } else {
            log.debug("VI/TCP {}: {}", PeerAddress.of(ctx), cause.toString());
            fail(describe(cause), 0, 0, ViStatus.FLUSHED);
        }
    }

    /**
     * Ends the connection: at Reliable Reception with an error, first a NOP whose Message ACK names the message in
     * error and whose Remote Error Code says why (§3.2, §3.6); then the TCP connection is closed and every
     * outstanding descriptor is completed.
     */
    void fail(String why, int viErrorType, int messageInError, ViStatus flushStatus) {
        if (failed) {
            return;
        }
        failed = true;
        endpoint.failed(why); // before the flush: a consumer reading failure() from a FLUSHED completion finds it
        if (ctx.channel().isActive()) {
            if (reliableReception && viErrorType != 0) {
                ctx.writeAndFlush(ViSegment.builder(ViSegmentType.NOP).messageNumber(tx.lastMessageNumberSent())
                        .messageAck(messageInError).rxDescriptorsPosted(rx.localRxPosted())
                        .remoteErrorCode(ViRemoteErrorCode.of(viErrorType, 0)).build())
                        .addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
        }
        flushAll(flushStatus);
    }

    /**
     * A segment could not be handed to TCP: the VI is broken (§2.2.2.2.2). Records why before the descriptor completes
     * FLUSHED (the channel closes and {@link #channelInactive} flushes the rest, in posting order). A write failed by the
     * close itself says only that the connection closed: the cause, if any, was recorded when it was detected.
     */
    void transmitFailed(Throwable cause) {
        endpoint.failed(describe(cause));
    }

    /**
     * A transport error as a user reads it: "TCP error: Connection reset by peer"; a failure caused by the close itself
     * (a write it failed, as Netty reports it) is {@link #CLOSED}.
     */
    private static String describe(Throwable cause) {
        if (cause instanceof ClosedChannelException) {
            return CLOSED;
        }
        return cause instanceof IOException && cause.getMessage() != null ? "TCP error: " + cause.getMessage()
                : cause.toString();
    }

    private void flushAll(ViStatus status) {
        tx.flush(status);
        rx.flush(status);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        // §2.2.2.2.2: when the TCP connection closes the VI connection closes
        fail(CLOSED, 0, 0, ViStatus.FLUSHED);
        ctx.fireChannelInactive();
    }

    void complete(ViSendRequest r, ViStatus status, long bytes) {
        endpoint.sendCq().add(new ViCompletion(r.wrId, r.opcode, status, bytes, r.immediateData, r.immediateDataValid));
    }
}
