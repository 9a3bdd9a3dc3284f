package dev.iwarp.server;

/**
 * The work-request ids of a {@link BenchConnection}: the slot in the low half, the kind in the high one. The wire
 * keeps the requests it made by wrId in a table indexed by the low octet (the high half folded in): slots that differ
 * there never evict each other's request, where slot-then-kind ids 8 apart put slots 32 apart on one entry and made a
 * new request at every post of a ring 64 deep.
 */
final class BenchWrIds {
    /** The iteration's own Write, Read or Send. */
    static final int KIND_MAIN = 0;
    /** --verify's Write before a Read. */
    static final int KIND_SETUP = 1;
    /** --verify's Read after a Write. */
    static final int KIND_CHECK = 2;
    /** A receive for an echo. */
    static final int KIND_RECV = 3;
    /** The bench hello's Send and receive. */
    static final int KIND_HELLO = 4;

    private BenchWrIds() {
    }

    /** The id of a request of {@code kind} whose offsets depend on {@code slot}. */
    static long wr(long slot, int kind) {
        return (long) kind << 32 | slot;
    }

    static int kindOf(long wrId) {
        return (int) (wrId >>> 32);
    }

    static long slotOf(long wrId) {
        return wrId & 0xffff_ffffL;
    }
}
