package dev.iwarp.vitcp;

/**
 * The 16-bit Calling Attributes field of the CE Header. draft-dicecco-vitcp-01 §3.3 "Calling Attributes".
 * (The figure labels bits 3 and 4 both "RWE"; the text says bit 3 RDMA Write Enable, bit 4 RDMA Read Enable.)
 */
public final class ViCallingAttributes {
    /** Calling Attributes bit: Unreliable. */
    public static final int UNRELIABLE = 1;
    /** Calling Attributes bit: Reliable Delivery. */
    public static final int RELIABLE_DELIVERY = 1 << 1;
    /** Calling Attributes bit: Reliable Reception. */
    public static final int RELIABLE_RECEPTION = 1 << 2;
    /** Calling Attributes bit: RDMA Write enabled. */
    public static final int RDMA_WRITE_ENABLE = 1 << 3;
    /** Calling Attributes bit: RDMA Read enabled. */
    public static final int RDMA_READ_ENABLE = 1 << 4;
    /** Calling Attributes bit: descriptor flow control in use (draft §3.3). */
    public static final int DESCRIPTOR_FLOW_CONTROL = 1 << 5;
    /** Calling Attributes bit: peer-to-peer connection model. */
    public static final int PEER_TO_PEER = 1 << 6;
    /** Bits 7..15 are reserved. */
    public static final int RESERVED_MASK = 0xFF80;

    private ViCallingAttributes() {
    }

    /** The Calling Attributes word for this reliability level and these enables. */
    public static int of(ViReliabilityLevel level, boolean rdmaWrite, boolean rdmaRead,
                         boolean descriptorFlowControl, boolean peerToPeer) {
        return level.bit()
                | (rdmaWrite ? RDMA_WRITE_ENABLE : 0)
                | (rdmaRead ? RDMA_READ_ENABLE : 0)
                | (descriptorFlowControl ? DESCRIPTOR_FLOW_CONTROL : 0)
                | (peerToPeer ? PEER_TO_PEER : 0);
    }

    /** Whether {@code bit} is set in {@code attributes}. */
    public static boolean has(int attributes, int bit) {
        return (attributes & bit) != 0;
    }
}
