package dev.iwarp.sctp;

/**
 * The 8-bit Flags of the header extension (draft §2.2). The draft numbers bits 0-7 without saying from
 * which end; bit 0 is taken as the most significant, as in the draft's own diagrams (draft §2.2 does not
 * say; our reading). The
 * masks live only here, so the other reading (0x01, 0x02, 0x04) is a change of three constants.
 */
public final class PlacementFlags {
    /** Bit 0, Acknowledgement Requested. */
    public static final int ACK_REQUESTED = 0x80;
    /** Bit 1, Notification upon Completion. */
    public static final int NOTIFY_ON_COMPLETION = 0x40;
    /** Bit 2, Release Tag upon Completion. */
    public static final int RELEASE_TAG = 0x20;
    /** Bits 3-7: sent 0, ignored on receipt (the usual reserved-bits rule;
     * draft §2.2 leaves them undefined). */
    public static final int RESERVED = 0x1F;

    private PlacementFlags() {
    }

    /** e.g. {@code "NotifyOnCompletion|ReleaseTag"}, or {@code "none"}. */
    public static String describe(int flags) {
        StringBuilder b = new StringBuilder();
        if ((flags & ACK_REQUESTED) != 0) {
            b.append("AckRequested|");
        }
        if ((flags & NOTIFY_ON_COMPLETION) != 0) {
            b.append("NotifyOnCompletion|");
        }
        if ((flags & RELEASE_TAG) != 0) {
            b.append("ReleaseTag|");
        }
        if ((flags & RESERVED) != 0) {
            b.append(String.format("reserved 0x%02x|", flags & RESERVED));
        }
        return b.length() == 0 ? "none" : b.substring(0, b.length() - 1);
    }
}
