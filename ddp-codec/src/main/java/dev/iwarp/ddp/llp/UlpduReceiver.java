package dev.iwarp.ddp.llp;

import io.netty.buffer.ByteBuf;

/**
 * Receive side of the lower-layer contract, implemented by the core that consumes DDP (the RDMA
 * engine) and bound with {@link LlpStream#receiveWith}. For each ULPDU, in order, the framing calls
 * <ol>
 *   <li>{@link #onHeader}: the DDP header, before a single payload octet is placed. The core checks it
 *       (RFC 5041 §7.2: STag, base and bounds, queue, MSN, MO) and answers with the payload's
 *       destination in its reused {@link Placement}: a place in a region, "deliver it to me as a
 *       buffer" (control messages, Terminates, Sends), or "discard it";</li>
 *   <li>then the framing moves the payload octets there (its own CRC covers what it read) and calls
 *       {@link #onPlaced} (for a place) or {@link #onPayload} (for "deliver"); for "discard", nothing.</li>
 * </ol>
 * A framing that finds its unit broken (CRC, marker, length) reports that as an {@link LlpException}
 * through the pipeline and calls neither for that unit. All calls come on the channel's event loop.
 */
public interface UlpduReceiver {

    /**
     * The DDP header of the next ULPDU: {@code ulpdu}'s readable octets begin with it (the payload may
     * follow, or not yet be read); {@code headerLength} (14 tagged, 18 untagged) was checked against
     * the T bit; {@code payloadLength} octets follow it in the framing unit. The indices of
     * {@code ulpdu} must be left as they are; the buffer is valid only during this call.
     *
     * @return the destination of the payload (the receiver's own reused {@link Placement})
     */
    Placement onHeader(ByteBuf ulpdu, int headerLength, int payloadLength);

    /** The payload of the ULPDU whose header {@link #onHeader} answered with a place is now there. */
    void onPlaced();

    /**
     * The ULPDU whose header {@link #onHeader} answered with "deliver": its readable octets are the DDP
     * header followed by the payload. Lent for this call: the receiver reads it within the call, may
     * keep a retained slice, and does not release it (the framing does).
     */
    void onPayload(ByteBuf ulpdu);
}
