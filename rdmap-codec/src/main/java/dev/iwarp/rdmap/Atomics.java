package dev.iwarp.rdmap;

/**
 * The arithmetic of the RFC 7306 atomic operations on one 64-bit value. Each
 * returns the value the responder writes; the Atomic Response carries the original.
 */
public final class Atomics {

    private Atomics() {
    }

    /**
     * FetchAdd: {@code original + add}, where each 1 bit of {@code mask} marks the most significant
     * bit of a field: the carry out of that bit is dropped instead of entering the next higher bit,
     * so one request adds to several independent fields. Mask 0 is a plain 64-bit add.
     */
    public static long fetchAdd(long original, long add, long mask) {
        // Partitioned add: sum without the field tops, whose carry-in then arrives at the top bit;
        // the top bits are the carry-in XOR both operands' top bits, and never carry out.
        return ((original & ~mask) + (add & ~mask)) ^ ((original ^ add) & mask);
    }

    /** Swap: the bits of {@code mask} come from {@code data}, the others stay. */
    public static long swap(long original, long data, long mask) {
        return (original & ~mask) | (data & mask);
    }

    /**
     * CmpSwap: when {@code original} and {@code compare} agree on the bits of {@code compareMask},
     * the bits of {@code swapMask} come from {@code swap}; otherwise the original stays.
     */
    public static long compareSwap(long original, long compare, long compareMask, long swap, long swapMask) {
        return ((original ^ compare) & compareMask) == 0 ? swap(original, swap, swapMask) : original;
    }
}
