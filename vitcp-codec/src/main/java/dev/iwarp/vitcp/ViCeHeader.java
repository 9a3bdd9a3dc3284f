package dev.iwarp.vitcp;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The Connection Establishment Header of ConnectRequest and ConnectAccept. draft-dicecco-vitcp-01 §3.3.
 * Fixed part: 140 octets (attributes, calling discriminator length, MTU, 64-octet calling discriminator,
 * RDMA read window, called discriminator length, 64-octet called discriminator), then the options.
 *
 * <p>On encode the option list is written as given followed by End of Option List when
 * {@link #endOfOptionList()} is set. Options of unknown type received from a peer are kept (and ignored).
 */
public final class ViCeHeader {
    /** Octets of the CE header before its options. */
    public static final int FIXED_LENGTH = 140;
    /** Largest discriminator the 64-octet fields hold (draft §3.3). */
    public static final int MAX_DISCRIMINATOR_LENGTH = 64;

    private final int callingAttributes;
    private final long mtuSize;
    private final byte[] callingDiscriminator;
    private final int rdmaReadWindow;
    private final byte[] calledDiscriminator;
    private final List<ViCeOption> options;
    private final boolean endOfOptionList;

    /** A CE header with these fields; the discriminators are copied. */
    public ViCeHeader(int callingAttributes, long mtuSize, byte[] callingDiscriminator, int rdmaReadWindow,
                      byte[] calledDiscriminator, List<ViCeOption> options, boolean endOfOptionList) {
        if ((callingAttributes & ~0xFFFF) != 0 || (rdmaReadWindow & ~0xFFFF) != 0) {
            throw new IllegalArgumentException("16-bit field out of range");
        }
        if (mtuSize < 0 || mtuSize > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("MTU Size out of range: " + mtuSize);
        }
        if (callingDiscriminator.length > MAX_DISCRIMINATOR_LENGTH
                || calledDiscriminator.length > MAX_DISCRIMINATOR_LENGTH) {
            // draft-dicecco-vitcp-01 §3.3: a 64 byte field sets the maximum discriminator length
            throw new IllegalArgumentException("discriminator longer than 64 octets");
        }
        this.callingAttributes = callingAttributes;
        this.mtuSize = mtuSize;
        this.callingDiscriminator = callingDiscriminator.clone();
        this.rdmaReadWindow = rdmaReadWindow;
        this.calledDiscriminator = calledDiscriminator.clone();
        this.options = List.copyOf(options);
        this.endOfOptionList = endOfOptionList;
    }

    /** The Calling Attributes word ({@link ViCallingAttributes}). */
    public int callingAttributes() {
        return callingAttributes;
    }

    /** The reliability level the Calling Attributes name. */
    public ViReliabilityLevel reliabilityLevel() {
        return ViReliabilityLevel.fromAttributes(callingAttributes);
    }

    /** Whether Calling Attributes bit {@code bit} is set. */
    public boolean hasAttribute(int bit) {
        return ViCallingAttributes.has(callingAttributes, bit);
    }

    /** The MTU Size field: largest payload per segment proposed. */
    public long mtuSize() {
        return mtuSize;
    }

    /** The Calling Discriminator (a copy). */
    public byte[] callingDiscriminator() {
        return callingDiscriminator.clone();
    }

    /** The RDMA Read Window proposed. */
    public int rdmaReadWindow() {
        return rdmaReadWindow;
    }

    /** The Called Discriminator (a copy). */
    public byte[] calledDiscriminator() {
        return calledDiscriminator.clone();
    }

    /** The options, in wire order. */
    public List<ViCeOption> options() {
        return options;
    }

    /** Whether the option list ended with an End of Option List option. */
    public boolean endOfOptionList() {
        return endOfOptionList;
    }

    /** Whether an option of this type is present. */
    public boolean hasOption(int type) {
        for (ViCeOption o : options) {
            if (o.type() == type) {
                return true;
            }
        }
        return false;
    }

    /** draft-dicecco-vitcp-01 §3.6: the CE segment has a trailer CRC iff it carries the CRC option. */
    public boolean crcOption() {
        return hasOption(ViCeOption.CRC);
    }

    /** Encoded length of fixed part plus options plus End of Option List. */
    public int encodedLength() {
        int n = FIXED_LENGTH;
        for (ViCeOption o : options) {
            n += o.length();
        }
        return n + (endOfOptionList ? 2 : 0);
    }

    byte[] callingDiscriminatorUnsafe() {
        return callingDiscriminator;
    }

    byte[] calledDiscriminatorUnsafe() {
        return calledDiscriminator;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ViCeHeader h)) {
            return false;
        }
        return callingAttributes == h.callingAttributes && mtuSize == h.mtuSize
                && rdmaReadWindow == h.rdmaReadWindow && endOfOptionList == h.endOfOptionList
                && Arrays.equals(callingDiscriminator, h.callingDiscriminator)
                && Arrays.equals(calledDiscriminator, h.calledDiscriminator) && options.equals(h.options);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(callingDiscriminator) * 31 + Arrays.hashCode(calledDiscriminator)
                + callingAttributes * 7 + (int) mtuSize;
    }

    @Override
    public String toString() {
        HexFormat hex = HexFormat.of();
        return "CeHeader(attributes=0x" + Integer.toHexString(callingAttributes) + ", mtu=" + mtuSize
                + ", calling=" + hex.formatHex(callingDiscriminator) + ", readWindow=" + rdmaReadWindow
                + ", called=" + hex.formatHex(calledDiscriminator) + ", options=" + options
                + (endOfOptionList ? ", EOL" : "") + ")";
    }
}
