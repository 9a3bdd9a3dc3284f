package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

/**
 * What a framing checks over a payload that {@link DirectPayloadReader} reads into its destination, and the
 * trailer behind it: the one part of a direct read that differs per framing. MPA runs its CRC32C over the
 * FPDU from its ULPDU_Length field through the pad (RFC 5044 §4.4; direct reads apply only without markers,
 * so those octets lie in one run); IFT runs its payload CRC over the payload alone and finds it in the 4-octet
 * field behind it. Calls come on the channel's event loop, in stream order: {@link #start} once per payload,
 * {@link #update} for each run of payload octets in order, then {@link #checkTrailer}.
 */
public interface PayloadCheck {

    /**
     * A payload is about to be read into a destination: {@code frame}'s readable octets are what is here of its
     * framed unit (prefix and header, then the payload octets already received, which begin at index
     * {@code payloadIndex}); they are copied to the destination after this call. Starts the check afresh over the
     * octets among them the framing covers. Indexes must be left unchanged.
     */
    void start(ByteBuf frame, int payloadIndex);

    /** {@code length} payload octets at {@code index} of the destination, in order after the ones before. */
    void update(ByteBuf destination, int index, int length);

    /**
     * The whole payload is in its destination and {@code trailer} octets behind it are readable at {@code in}'s
     * reader index (they are skipped afterwards; indexes must be left unchanged): throws the framing's own error
     * (MPA's code 2, IFT's F4) when they do not match what was read. The reader then releases the destination
     * without reporting it placed. A framing that passes a unit with a bad CRC on, flagged, rather than failing the
     * stream (VI/TCP, whose §3.6 delivers it with status transport error) records the verdict here instead and
     * acts on it once the reader returned.
     */
    void checkTrailer(ChannelHandlerContext ctx, ByteBuf in, int trailer);
}
