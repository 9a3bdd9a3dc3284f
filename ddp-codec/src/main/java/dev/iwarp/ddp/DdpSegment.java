package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;

/**
 * One DDP segment (RFC 5041 §4): a header of the tagged (14 octets) or untagged (18 octets) buffer
 * model and the payload that follows it in one ULPDU. The payload is reference counted: whoever
 * holds a segment owns one reference and releases it.
 *
 * <pre>
 *  octet 0: |T|L| Rsvd(4) |DV(2)|   octet 1: RsvdULP[0:7] (RDMAP's control octet)
 * </pre>
 */
public interface DdpSegment extends ByteBufHolder {
    /** T bit (RFC 5041 §4.1). */
    int FLAG_TAGGED = 0x80;
    /** L bit: last segment of the DDP message. */
    int FLAG_LAST = 0x40;
    /** Reserved bits of the control octet: sent 0, not checked. */
    int RSVD_MASK = 0x3C;
    /** DV field. */
    int VERSION_MASK = 0x03;
    /** DDP version of RFC 5041 (0 is the RDMAC / 2004-draft version). */
    int VERSION_1 = 1;

    /** Whether the tagged buffer model header is used. */
    boolean isTagged();

    /** L bit. */
    boolean isLast();

    /** DV, as received or to be sent. */
    int ddpVersion();

    /** RsvdULP[0:7]: opaque to DDP, carried for the ULP (RDMAP's control octet). */
    int rsvdUlp();

    /** 14 (tagged) or 18 (untagged). */
    int headerLength();

    /** The payload (same as {@link #content()}). */
    default ByteBuf payload() {
        return content();
    }

    /** Payload octets. */
    default int payloadLength() {
        return content().readableBytes();
    }

    /** Writes the header at the writer index of {@code out}. */
    void encodeHeader(ByteBuf out);

    /** The control octet. */
    default int controlOctet() {
        return controlOctet(isTagged(), isLast(), ddpVersion());
    }

    /** The first header octet (RFC 5041 §4.2, §4.3): T and L flags, reserved bits zero, DV. */
    static int controlOctet(boolean tagged, boolean last, int ddpVersion) {
        return (tagged ? FLAG_TAGGED : 0) | (last ? FLAG_LAST : 0) | (ddpVersion & VERSION_MASK);
    }
}
