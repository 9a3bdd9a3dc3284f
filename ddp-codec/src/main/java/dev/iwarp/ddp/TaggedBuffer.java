package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;

/**
 * A registered tagged buffer (RFC 5041 §5.1, tagged buffer model): memory the local ULP advertised
 * under an STag, addressed by the peer with a Tagged Offset (TO) in {@code [baseTo, baseTo + length)}.
 * Created by {@link TaggedBufferTable#register}; everything but {@link #isValid()} is immutable.
 *
 * <p>{@link #place} and {@link #read} check only the bounds, never validity, protection domain or
 * rights: call {@link TaggedBufferTable#check} first. Neither ever touches an octet outside the
 * region.
 */
public final class TaggedBuffer {
    private final int stag;
    private final Object protectionDomain;
    private final ByteBuf memory;
    private final long baseTo;
    private final int length;
    private final int access;
    private final boolean remoteInvalidate;
    private volatile boolean valid = true;

    TaggedBuffer(int stag, Object protectionDomain, ByteBuf memory, long baseTo, int access,
                 boolean remoteInvalidate) {
        this.stag = stag;
        this.protectionDomain = protectionDomain;
        this.memory = memory;
        this.baseTo = baseTo;
        this.length = memory.readableBytes();
        this.access = access;
        this.remoteInvalidate = remoteInvalidate;
    }

    /** The STag: {@code index << 8 | key} (spec/ddp.md §9). */
    public int stag() {
        return stag;
    }

    /** 24-bit index part of the STag (never 0). */
    public int index() {
        return stag >>> 8;
    }

    /** 8-bit key part of the STag. */
    public int key() {
        return stag & 0xFF;
    }

    /** The protection domain the buffer was registered in (compared by identity). */
    public Object protectionDomain() {
        return protectionDomain;
    }

    /** TO of the region's first octet (unsigned 64 bits). */
    public long baseTo() {
        return baseTo;
    }

    /** Octets in the region. */
    public int length() {
        return length;
    }

    /** {@link AccessFlags} granted. */
    public int access() {
        return access;
    }

    /** Whether the peer may invalidate the STag (Send with Invalidate, RFC 5040 §5.3). */
    public boolean remoteInvalidate() {
        return remoteInvalidate;
    }

    /** False once invalidated (locally or by the peer) or deregistered. */
    public boolean isValid() {
        return valid;
    }

    /**
     * The region: a slice whose readable octets are {@code [baseTo, baseTo + length)}. Not retained for
     * the caller; usable until {@link TaggedBufferTable#deregister}. Do not move its indices.
     */
    public ByteBuf memory() {
        return memory;
    }

    /** Whether {@code [to, to + len)} lies inside the region, computed without wrap-around. */
    public boolean contains(long to, long len) {
        if (Long.compareUnsigned(to, baseTo) < 0 || len < 0) {
            return false;
        }
        long offset = to - baseTo;
        return Long.compareUnsigned(offset, length) <= 0 && len <= length - offset;
    }

    /**
     * Placement (RFC 5041 §5.1): copies the readable octets of {@code src} into the region at {@code to}.
     * Ownership: the caller keeps its reference to {@code src}; its indices are not changed.
     *
     * @throws IndexOutOfBoundsException if any octet would fall outside the region (nothing is written)
     */
    public void place(long to, ByteBuf src) {
        int len = src.readableBytes();
        if (!contains(to, len)) {
            throw outside(to, len);
        }
        memory.setBytes(memory.readerIndex() + (int) (to - baseTo), src, src.readerIndex(), len);
    }

    /**
     * The octets {@code [to, to + len)} of the region, e.g. the source of an RDMA Read Response, as a
     * retained slice (no copy): the caller owns it and releases it.
     *
     * @throws IndexOutOfBoundsException if the range leaves the region
     */
    public ByteBuf read(long to, int len) {
        if (!contains(to, len)) {
            throw outside(to, len);
        }
        return memory.retainedSlice(memory.readerIndex() + (int) (to - baseTo), len);
    }

    void invalidate() {
        valid = false;
    }

    private IndexOutOfBoundsException outside(long to, long len) {
        return new IndexOutOfBoundsException(String.format("TO 0x%016x length %d outside STag 0x%08x [0x%016x, +%d)",
                to, len, stag, baseTo, length));
    }

    @Override
    public String toString() {
        return String.format("TaggedBuffer{STag 0x%08x base TO 0x%016x length %d %s%s%s}", stag, baseTo, length,
                AccessFlags.describe(access), remoteInvalidate ? " remote-invalidate" : "", valid ? "" : " INVALID");
    }
}
