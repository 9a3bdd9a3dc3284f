package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;

import java.util.EnumSet;
import java.util.Set;

/**
 * The two 16-bit words RFC 6581 puts at the start of the Private Data of an enhanced (Rev 2) MPA
 * Request or Reply:
 *
 * <pre>
 *  |A|B|  IRD (14 bits)  |C|D|  ORD (14 bits)  |
 * </pre>
 *
 * A = peer-to-peer model, B = zero-length Send RTR, C = zero-length RDMA Write RTR, D = zero-length
 * RDMA Read RTR (mpa-rev2 §2). Immutable.
 */
public final class MpaIrdOrd {
    /** Octets the words occupy at the start of Private Data. */
    public static final int LENGTH = 4;
    /** Largest IRD or ORD value the 14-bit fields carry. */
    public static final int MAX_VALUE = 0x3FFF;

    static final int A_PEER_TO_PEER = 0x8000;
    static final int B_SEND_RTR = 0x4000;
    static final int C_WRITE_RTR = 0x8000;
    static final int D_READ_RTR = 0x4000;
    static final int VALUE_MASK = 0x3FFF;

    private final int ird;
    private final int ord;
    private final boolean peerToPeer;
    private final boolean sendRtr;
    private final boolean writeRtr;
    private final boolean readRtr;

    private MpaIrdOrd(int ird, int ord, boolean peerToPeer, boolean sendRtr, boolean writeRtr, boolean readRtr) {
        if (ird < 0 || ird > MAX_VALUE) {
            throw new IllegalArgumentException("IRD must be 0.." + MAX_VALUE + ": " + ird);
        }
        if (ord < 0 || ord > MAX_VALUE) {
            throw new IllegalArgumentException("ORD must be 0.." + MAX_VALUE + ": " + ord);
        }
        this.ird = ird;
        this.ord = ord;
        this.peerToPeer = peerToPeer;
        this.sendRtr = sendRtr;
        this.writeRtr = writeRtr;
        this.readRtr = readRtr;
    }

    /** Client-server words (A=0, no RTR bits). */
    public static MpaIrdOrd of(int ird, int ord) {
        return new MpaIrdOrd(ird, ord, false, false, false, false);
    }

    /** Peer-to-peer words: A=1 and one bit per RTR type in {@code rtrTypes}. */
    public static MpaIrdOrd peerToPeer(int ird, int ord, Set<RtrType> rtrTypes) {
        return new MpaIrdOrd(ird, ord, true, rtrTypes.contains(RtrType.SEND), rtrTypes.contains(RtrType.WRITE),
                rtrTypes.contains(RtrType.READ));
    }

    /** Decodes the two words from their 16-bit big-endian values. */
    public static MpaIrdOrd fromWords(int irdWord, int ordWord) {
        return new MpaIrdOrd(irdWord & VALUE_MASK, ordWord & VALUE_MASK, (irdWord & A_PEER_TO_PEER) != 0,
                (irdWord & B_SEND_RTR) != 0, (ordWord & C_WRITE_RTR) != 0, (ordWord & D_READ_RTR) != 0);
    }

    /** Reads the words at {@code index} of {@code buf} without moving its indexes. */
    public static MpaIrdOrd decode(ByteBuf buf, int index) {
        return fromWords(buf.getUnsignedShort(index), buf.getUnsignedShort(index + 2));
    }

    /** Writes the 4 octets at the writer index. */
    public void encode(ByteBuf out) {
        out.writeShort(irdWord());
        out.writeShort(ordWord());
    }

    /** The first word: A, B and IRD. */
    public int irdWord() {
        return (peerToPeer ? A_PEER_TO_PEER : 0) | (sendRtr ? B_SEND_RTR : 0) | ird;
    }

    /** The second word: C, D and ORD. */
    public int ordWord() {
        return (writeRtr ? C_WRITE_RTR : 0) | (readRtr ? D_READ_RTR : 0) | ord;
    }

    /** The Inbound RDMA Read queue Depth (14 bits, RFC 6581 §3). */
    public int ird() {
        return ird;
    }

    /** The Outbound RDMA Read queue Depth (14 bits, RFC 6581 §3). */
    public int ord() {
        return ord;
    }

    /** A bit: peer-to-peer connection model requested (Request) or accepted (Reply). */
    public boolean peerToPeer() {
        return peerToPeer;
    }

    /** The RTR types whose bits are set (B, C, D). In a Request: offered; in a Reply: chosen. */
    public Set<RtrType> rtrTypes() {
        EnumSet<RtrType> s = EnumSet.noneOf(RtrType.class);
        if (sendRtr) {
            s.add(RtrType.SEND);
        }
        if (writeRtr) {
            s.add(RtrType.WRITE);
        }
        if (readRtr) {
            s.add(RtrType.READ);
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof MpaIrdOrd)) {
            return false;
        }
        MpaIrdOrd other = (MpaIrdOrd) o;
        return irdWord() == other.irdWord() && ordWord() == other.ordWord();
    }

    @Override
    public int hashCode() {
        return irdWord() * 31 + ordWord();
    }

    @Override
    public String toString() {
        return "IRD=" + ird + " ORD=" + ord + (peerToPeer ? " P2P" + rtrTypes() : "");
    }
}
