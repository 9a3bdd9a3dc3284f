package dev.iwarp.ift;

/**
 * The nine flags of the adaption indication (IFT draft §4.2), "starting with the MSB of the flag
 * field": {@link #PH} is bit 0 = mask 0x80000000 of the 32-bit field (octet 8, 0x80). The other 23
 * bits are reserved: sent as 0, ignored on receipt.
 *
 * <p>HC and PC say what the <em>sender of the indication</em> will put in its frames; IH and IP say
 * which CRCs it will not check; SP is a permission for the <em>receiver of the indication</em>.
 */
public enum IftFlag {
    /** Phase: clear in phase 0 (node A to node B), set in phase 1 (node B's answer). */
    PH(0x80000000, "phase 1"),
    /** The sender wants RDMA mode; both clear means DDP mode; a mismatch MUST close the connection. */
    R(0x40000000, "RDMA mode"),
    /** The sender includes a header CRC in every frame it sends. */
    HC(0x20000000, "sends header CRC"),
    /** The sender includes a payload CRC in every frame it sends. */
    PC(0x10000000, "sends payload CRC"),
    /** The sender will not check the header CRC of frames it receives. */
    IH(0x08000000, "ignores header CRC"),
    /** The sender will not check the payload CRC of frames it receives. */
    IP(0x04000000, "ignores payload CRC"),
    /** The sender permits the receiver to place the sender's data speculatively (draft §8). */
    SP(0x02000000, "permits speculative placement"),
    /** The sender is willing to send periodic markers (draft §9: details "TBD"). */
    SM(0x01000000, "will send markers"),
    /** The sender wishes to receive periodic markers. */
    RM(0x00800000, "wants markers");

    /** The 23 reserved bits of the flag field (IFT draft §4.2: zero when sent, ignored when received). */
    public static final int RESERVED_MASK = 0x007FFFFF;

    private final int mask;
    private final String meaning;

    IftFlag(int mask, String meaning) {
        this.mask = mask;
        this.meaning = meaning;
    }

    /** The flag's bit in the 32-bit big-endian flag field. */
    public int mask() {
        return mask;
    }

    /** What a set bit says about the sender. */
    public String meaning() {
        return meaning;
    }

    /** The names of the flags set in {@code flags}, joined with '|' ("none" when none is set). */
    public static String describe(int flags) {
        StringBuilder sb = new StringBuilder();
        for (IftFlag f : values()) {
            if ((flags & f.mask) != 0) {
                sb.append(sb.length() == 0 ? "" : "|").append(f.name());
            }
        }
        if ((flags & RESERVED_MASK) != 0) {
            sb.append(sb.length() == 0 ? "" : "|").append(String.format("reserved 0x%06X", flags & RESERVED_MASK));
        }
        return sb.length() == 0 ? "none" : sb.toString();
    }
}
