package dev.iwarp.sctp;

import io.netty.buffer.ByteBuf;

/**
 * The Adaptation Layer Indication values (draft §2.1, five of them although the text says three):
 * what an endpoint announces in its INIT or INIT-ACK parameter 0xC006, and which placement modes and
 * which header extension its own messages then use.
 */
public enum SctpIndication {
    /** Direct placement; the stream implies the user buffer. */
    DDP(1, 16),
    /** Direct placement; the Placement Tag implies the user buffer. */
    DDP_WITH_TAG(2, 16),
    /** RDMA placement only: every message placed (S1, R1). */
    RDMA_ONLY(3, 20),
    /** RDMA placement and negotiation (non-placed messages allowed): what our RDMAP stack sends (our choice: it
     * also carries RDMAP's Terminate and other non-placed messages). */
    RDMA_AND_NEGOTIATION(4, 20),
    /** Negotiation only: nothing is placed on this association (S2). */
    RDMA_NEGOTIATION(5, 20);

    /** Parameter type of the Adaptation Layer Indication (RFC 5061 §4.2.7; the draft's [STEWa]). */
    public static final int PARAMETER_TYPE = 0xC006;
    /** Parameter length: type, length and one 32-bit value (RFC 5061 §4.2.7;
     * the draft does not restate it). */
    public static final int PARAMETER_LENGTH = 8;

    private final int value;
    private final int extensionLength;

    SctpIndication(int value, int extensionLength) {
        this.value = value;
        this.extensionLength = extensionLength;
    }

    /** The 32-bit value carried in the parameter. */
    public int value() {
        return value;
    }

    /**
     * Octets of the header extension this indication's sender puts before every message's data: 16
     * (DDP extension) or 20 (RDMA extension, with AWS) (draft §2.2's two layouts; which
     * one an indication selects is our reading, where the draft leaves it implicit).
     */
    public int extensionLength() {
        return extensionLength;
    }

    /** Whether this sender's messages carry an Association Wide Sequence (the RDMA family). */
    public boolean carriesAws() {
        return extensionLength == 20;
    }

    /** The indication with this value, or {@code null} for any other value (= no adaptation, §3 rule 4). */
    public static SctpIndication of(long value) {
        for (SctpIndication i : values()) {
            if (i.value == value) {
                return i;
            }
        }
        return null;
    }

    /** Writes the 8-octet parameter {@code C0 06 00 08} + value, big-endian (§2). */
    public void writeParameter(ByteBuf out) {
        out.writeShort(PARAMETER_TYPE).writeShort(PARAMETER_LENGTH).writeInt(value);
    }

    /** Whether the readable octets of {@code buf} are exactly one Adaptation Layer Indication parameter. */
    public static boolean isParameter(ByteBuf buf) {
        return buf.readableBytes() == PARAMETER_LENGTH
                && buf.getUnsignedShort(buf.readerIndex()) == PARAMETER_TYPE
                && buf.getUnsignedShort(buf.readerIndex() + 2) == PARAMETER_LENGTH;
    }

    /** Whether a message starts like the parameter ({@code C0 06}); an extension always starts with 0x00. */
    public static boolean looksLikeParameter(ByteBuf buf) {
        return buf.readableBytes() >= 2 && buf.getUnsignedShort(buf.readerIndex()) == PARAMETER_TYPE;
    }

    @Override
    public String toString() {
        return name() + " (" + value + ")";
    }
}
