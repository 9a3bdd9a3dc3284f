package dev.iwarp.rdmap;

/** AtomOp of an Atomic Request (RFC 7306): the low 4 bits of its first word. */
public enum AtomicOp {
    /** Fetch and Add: adds to the target, returns its original value. */
    FETCH_ADD(0x0),
    /** Swap: writes the swap data, returns the target's original value. */
    SWAP(0x1),
    /** Compare and Swap: writes the swap data if the target equals the compare data. */
    COMPARE_SWAP(0x2);

    private final int value;

    AtomicOp(int value) {
        this.value = value;
    }

    /** The AtomicOperation code on the wire (RFC 7306 §5.1). */
    public int value() {
        return value;
    }

    /** The operation, or {@code null} for reserved values. */
    public static AtomicOp fromValue(int value) {
        for (AtomicOp op : values()) {
            if (op.value == value) {
                return op;
            }
        }
        return null;
    }
}
