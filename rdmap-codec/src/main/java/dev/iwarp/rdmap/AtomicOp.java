package dev.iwarp.rdmap;

/** AtomOp of an Atomic Request (RFC 7306; rdmap.md §12.2): the low 4 bits of its first word. */
public enum AtomicOp {
    FETCH_ADD(0x0),
    SWAP(0x1),
    COMPARE_SWAP(0x2);

    private final int value;

    AtomicOp(int value) {
        this.value = value;
    }

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
