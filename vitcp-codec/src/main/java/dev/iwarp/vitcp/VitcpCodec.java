package dev.iwarp.vitcp;

import dev.iwarp.framing.DirectReadAllocator;
import io.netty.channel.CombinedChannelDuplexHandler;

/**
 * The VI/TCP segment codec: {@link VitcpSegmentDecoder} (a {@code ByteToMessageDecoder}) and
 * {@link VitcpSegmentEncoder} (zero-copy composite output) combined. Netty's {@code ByteToMessageCodec} would copy
 * every payload into one output buffer, which the project's zero-copy rule forbids; this is otherwise the same
 * shape.
 */
public final class VitcpCodec extends CombinedChannelDuplexHandler<VitcpSegmentDecoder, VitcpSegmentEncoder> {

    private final VitcpCrcMode crcMode;

    public VitcpCodec() {
        this(VitcpCrcMode.ETHERNET_REFLECTED);
    }

    public VitcpCodec(VitcpCrcMode crcMode) {
        super(new VitcpSegmentDecoder(crcMode), new VitcpSegmentEncoder(crcMode));
        this.crcMode = crcMode;
    }

    public VitcpCrcMode crcMode() {
        return crcMode;
    }

    /** Whether octets of a segment not yet complete are held ({@link VitcpSegmentDecoder#holdsIncompleteSegment()}). */
    public boolean holdsIncompleteSegment() {
        return inboundHandler().holdsIncompleteSegment();
    }

    /** Trailer CRCs on data-phase segments: on iff both CE frames carried the CRC option (§3.5). */
    public void crcEnabled(boolean enabled) {
        inboundHandler().crcEnabled(enabled);
        outboundHandler().crcEnabled(enabled);
    }

    public boolean crcEnabled() {
        return inboundHandler().crcEnabled();
    }

    /** Data segments' payloads go where {@code placement} says ({@link VitcpSegmentDecoder#receiveWith}). */
    public void receiveWith(ViPayloadPlacement placement) {
        inboundHandler().receiveWith(placement);
    }

    /** Socket reads go straight into payload destinations ({@link VitcpSegmentDecoder#readDirectlyWith}). */
    public void readDirectlyWith(DirectReadAllocator allocator) {
        inboundHandler().readDirectlyWith(allocator);
    }
}
