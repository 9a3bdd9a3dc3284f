package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;

/**
 * Where a framing (MPA's framer, for one) hands received ULPDUs once one is bound, instead of passing them up
 * the pipeline: the ULP above (DDP) answers a ULPDU's header with the memory its payload goes to, so that the
 * framing can read the payload from the socket straight there. A framing knows nothing of DDP, hence this
 * narrow interface; all calls come on the channel's event loop, in stream order.
 *
 * <p>For each ULPDU either {@link #ulpdu} is called once with the whole ULPDU (CRC and markers checked), or,
 * for a large payload not yet received, {@link #payloadDestination} first: a non-null answer is filled with
 * the payload and then {@link #placed} follows once the framing's integrity check (MPA's CRC) matched (on a
 * mismatch the framing raises its own error, MPA's code 2, and calls neither); a null answer means the whole ULPDU follows through
 * {@link #ulpdu} once checked.
 */
public interface UlpduSink {

    /** Octets at the start of a ULPDU whose first octet is {@code firstOctet} that decide its destination. */
    int headerLength(int firstOctet);

    /**
     * The header of a ULPDU whose payload is still arriving: {@code ulpdu}'s readable octets begin with its
     * {@code headerLength} header octets (some payload may follow); its indices must be left unchanged and it
     * is valid only during the call. {@code payloadLength} octets of payload follow the header.
     *
     * @return a writable buffer of capacity {@code payloadLength} with writer index 0 that the framer fills
     *         and then releases, or null to receive the whole ULPDU through {@link #ulpdu} instead
     */
    ByteBuf payloadDestination(ByteBuf ulpdu, int headerLength, int payloadLength);

    /** The destination {@link #payloadDestination} returned holds the payload, and the framing's integrity check matched. */
    void placed();

    /**
     * A whole received ULPDU, checked: lent for this call (the sink may keep a retained slice and does not
     * release it). Follows a null {@link #payloadDestination} answer for the same ULPDU, or stands alone.
     */
    void ulpdu(ByteBuf ulpdu);
}
