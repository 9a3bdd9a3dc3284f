package dev.iwarp.ddp.llp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelPromise;

/**
 * Transmit side of the lower-layer contract: one call per ULPDU (RFC 5041 §5: one DDP segment per
 * framing unit). The framing writes the header octets and the payload as one framing unit (MPA FPDU,
 * IFT frame, SCTP message) without the caller building a composite ULPDU. Called on the event loop.
 */
public interface UlpduWriter {

    /**
     * Writes one ULPDU: {@code header}'s readable octets (a DDP header; read, not kept: the caller may
     * reuse it at once) followed by {@code payload}'s readable octets (its reference passes to the
     * framing). {@code promise} completes once the framing unit was written to the transport, or fails.
     *
     * @return whether the framing copied the payload into its own buffer and released it before this
     *         returned: the caller's memory is then free, although the framing unit may still wait in
     *         the outbound buffer (as siw's source once in the TCP send buffer)
     */
    boolean writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise);

    /**
     * What {@link #writeUlpdu} called now for a header of {@code headerLength} octets and a payload of
     * {@code payloadLength} octets would return. A sender that asks may complete a message as sent once
     * its write returned, instead of once the socket took it. By default false (never copies).
     *
     * <p>Asked before the write, because the answer changes what the sender does before it: a sender that must
     * not let its source change under a payload CRC (a region peers may write, RFC 5044 §4.4's CRC over the
     * octets sent) copies each segment itself unless the framing will copy it anyway; {@link #writeUlpdu}'s
     * return comes too late to skip that copy. Only a framing that copies small payloads into its unit (MPA)
     * answers true; the others keep the default.
     */
    default boolean copiesPayload(int headerLength, int payloadLength) {
        return false;
    }
}
