package dev.iwarp.verbs;

import java.util.Objects;

/**
 * A scatter/gather element: {@code length} octets at {@code offset} of a registered region
 * (libibverbs ibv_sge, with the region itself instead of its lkey and address).
 */
public final class Sge {
    private final MemoryRegion region;
    private final int offset;
    private final int length;

    Sge(MemoryRegion region, int offset, int length) {
        this.region = Objects.requireNonNull(region, "region");
        if (offset < 0 || length < 0 || (long) offset + length > region.length()) {
            throw new IndexOutOfBoundsException("SGE [" + offset + ", +" + length + ") outside region of "
                    + region.length() + " octets");
        }
        this.offset = offset;
        this.length = length;
    }

    public MemoryRegion region() {
        return region;
    }

    /** Offset in the region. */
    public int offset() {
        return offset;
    }

    public int length() {
        return length;
    }

    /** The Tagged Offset of the first octet, as a peer would address it. */
    public long to() {
        return region.iova() + offset;
    }

    @Override
    public String toString() {
        return "Sge{" + region + " +" + offset + " len " + length + "}";
    }
}
