package dev.iwarp.ddp.llp;

import dev.iwarp.ddp.MulpduSource;
import io.netty.channel.ChannelHandlerContext;

/**
 * The operations DDP and RDMAP invoke on the framing below them, implemented by each framing's
 * adapter. All methods are called on the stream's event loop.
 */
public interface LowerLayer extends MulpduSource {

    /**
     * Graceful close: everything written so far goes out first, then the connection closes (for a
     * TCP framing a FIN after the last complete framing unit; RFC 5040 §6.2.1). Never produces an
     * empty framing unit. Idempotent.
     */
    void closeAfterFlush();

    /**
     * Why ULPDUs written now would not reach the wire before a close, or {@code null} when they
     * would. An MPA Responder holds its FPDUs until the first valid FPDU arrived (RFC 5044 §7.1.2
     * rule 4): until then a Terminate cannot be sent, and RDMAP says so instead of claiming it.
     */
    String transmitHoldReason();

    /**
     * Whether the adapter below takes each outbound {@link dev.iwarp.ddp.DdpSegment} itself (and its
     * reference) instead of the ULPDU {@link dev.iwarp.ddp.DdpCodec} would encode: it then frames the
     * header octets and the payload without building a composite ULPDU per segment. {@code DdpCodec}
     * passes segments down unencoded from the {@link LlpStartupEvent} that announces such a lower
     * layer on. By default false.
     */
    default boolean takesSegments() {
        return false;
    }

    /**
     * Whether a sender at {@code sender} may write {@link dev.iwarp.ddp.DdpOutboundMessage}s down to this
     * lower layer's adapter in place of segments, one write per segment: each write of a message makes
     * the adapter take that message's next segment at once ({@link
     * dev.iwarp.ddp.DdpOutboundMessage#nextSegment(io.netty.buffer.ByteBuf)}, no segment object, issue 13)
     * and use the write's promise for it. Only when the adapter {@linkplain #takesSegments() takes
     * segments} and no outbound handler but {@link dev.iwarp.ddp.DdpCodec} sits between {@code sender}
     * and it: a handler there could hold a message, which changes with every write. By default false.
     */
    default boolean takesMessagesFrom(ChannelHandlerContext sender) {
        return false;
    }

    /**
     * Whether a message segment with a DDP header of {@code headerLength} octets and {@code payloadLength}
     * payload octets, written to this adapter now as {@link #takesMessagesFrom} describes, has its payload
     * copied into the framing's own buffer and released before the write returns; the adapter then confirms
     * it with {@link dev.iwarp.ddp.DdpOutboundMessage#payloadCopiedBelow()}. The sender may then treat the
     * message as sent once written (its source is free, as siw's is once in the TCP send buffer) and pass a
     * void promise. By default false.
     */
    default boolean copiesPayload(int headerLength, int payloadLength) {
        return false;
    }

    /**
     * Asks this lower layer to hand each ULPDU up to {@code receiver} as a view of its own receive
     * buffer, lent for the {@code channelRead} that carries it: no ULPDU object per FPDU (issue 13). The
     * receiver reads it within that call, keeps no reference to the buffer itself (a retained slice of it
     * stays valid), and releases it once, as any message. Only when no inbound handler but {@link
     * dev.iwarp.ddp.DdpCodec} sits between this lower layer's adapter and {@code receiver}: another could
     * keep a buffer whose indices move on. Returns whether ULPDUs are lent from now on; by default false.
     */
    default boolean lendsUlpdusTo(ChannelHandlerContext receiver) {
        return false;
    }
}
