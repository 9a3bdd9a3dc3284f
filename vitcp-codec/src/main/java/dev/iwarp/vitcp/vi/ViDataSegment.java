package dev.iwarp.vitcp.vi;

/** One local data segment of a descriptor: virtual address, memory handle (via the region) and length. */
public record ViDataSegment(ViMemoryRegion region, long address, int length) {
    /** Checks that the length is not negative. */
    public ViDataSegment {
        if (length < 0) {
            throw new IllegalArgumentException("negative length");
        }
    }

    /** Index into the region's buffer. */
    int index() {
        return (int) (address - region.address());
    }

    boolean valid() {
        return region.isValid() && region.contains(address, length);
    }
}
