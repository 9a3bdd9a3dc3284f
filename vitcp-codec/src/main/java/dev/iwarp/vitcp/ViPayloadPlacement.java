package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;

/**
 * Where a data segment's payload goes, asked by {@link VitcpSegmentDecoder} once the segment's headers are in and
 * passed the decoder's checks, before its payload is there: the VI's receive half answers with the memory the
 * payload belongs in (the region an RDMA Write names, the posted receive a Send fills, the local buffer of the RDMA
 * Read a Read Response answers), and the decoder reads the payload from the socket straight into it, as Linux siw
 * places from the socket buffer. The segment then goes up the pipeline as usual, marked {@link ViSegment#placed()}.
 *
 * <p>The answer must come from checks of the header alone that change nothing: the segment's own processing
 * (message order, Message ACK, descriptor use) happens when it arrives, after the CRC was checked, exactly as for a
 * segment received whole, and must find the payload where it would have put it. Every check that would refuse the
 * segment answers null, so that nothing of it is placed. Calls come on the channel's event loop, in stream order.
 */
@FunctionalInterface
public interface ViPayloadPlacement {

    /**
     * The destination of the payload of {@code header} (its fields; no content), of which {@code payloadLength}
     * octets follow its headers.
     *
     * @return a writable buffer of capacity {@code payloadLength} with writer index 0 that the decoder fills and
     *         releases (it keeps a view of it as the segment's content), or null to receive the segment whole
     */
    ByteBuf payloadDestination(ViSegment header, int payloadLength);
}
