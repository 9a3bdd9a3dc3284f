package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * A registered tagged buffer (RFC 5041 §5.1, tagged buffer model): memory the local ULP advertised
 * under an STag, addressed by the peer with a Tagged Offset (TO) in {@code [baseTo, baseTo + length)}.
 * Created by {@link TaggedBufferTable#register}; everything but {@link #isValid()} is immutable.
 *
 * <p>{@link #place} and {@link #read} check only the bounds, never validity, protection domain or
 * rights: call {@link TaggedBufferTable#check} first. Neither ever touches an octet outside the
 * region.
 *
 * <p>An <em>on-demand</em> buffer ({@link TaggedBufferTable#registerOnDemand}) has a length but no memory until
 * it is first placed into, read, or asked for its {@link #memory()}; then its allocator gives it zeroed memory,
 * which it holds until {@link #discard()} (its contents read as zeros again, as after Linux's
 * {@code madvise(MADV_DONTNEED)}) or deregistration. A peer cannot tell the difference: untouched octets read
 * as zeros either way. Allocation, placement, reads and release of an on-demand buffer run under its lock, so
 * memory is never written after it went back to its allocator.
 */
public final class TaggedBuffer implements dev.iwarp.ddp.llp.Placement.Target {
    private final int stag;
    private final Object protectionDomain;
    /** The registered slice; {@code null} for an on-demand buffer. */
    private final ByteBuf memory;
    /** Gives an on-demand buffer its memory; {@code null} otherwise. */
    private final ByteBufAllocator allocator;
    /** On demand: where its memory is reserved before it is allocated. */
    private final MemoryAccount account;
    private final long baseTo;
    private final int length;
    private final int access;
    private final boolean remoteInvalidate;
    private volatile boolean valid = true;
    /** On demand: the memory while allocated (guarded by this). */
    private ByteBuf allocated;
    /** On demand: deregistered, never to allocate again (guarded by this). */
    private boolean released;

    TaggedBuffer(int stag, Object protectionDomain, ByteBuf memory, long baseTo, int access,
                 boolean remoteInvalidate) {
        this(stag, protectionDomain, memory, null, MemoryAccount.UNLIMITED, memory.readableBytes(), baseTo, access,
                remoteInvalidate);
    }

    TaggedBuffer(int stag, Object protectionDomain, ByteBuf memory, ByteBufAllocator allocator, MemoryAccount account,
                 int length, long baseTo, int access, boolean remoteInvalidate) {
        this.account = account;
        this.stag = stag;
        this.protectionDomain = protectionDomain;
        this.memory = memory;
        this.allocator = allocator;
        this.baseTo = baseTo;
        this.length = length;
        this.access = access;
        this.remoteInvalidate = remoteInvalidate;
    }

    /** The STag: {@code index << 8 | key} (siw's STag layout). */
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
     * the caller; usable until {@link TaggedBufferTable#deregister} (on demand: or {@link #discard()}, and
     * allocated by this call if it was not). Do not move its indices.
     *
     * @throws IllegalStateException if an on-demand buffer was deregistered
     */
    public ByteBuf memory() {
        if (allocator == null) {
            return memory;
        }
        synchronized (this) {
            return allocated();
        }
    }

    /** Whether the buffer gets its memory on demand ({@link TaggedBufferTable#registerOnDemand}). */
    public boolean isOnDemand() {
        return allocator != null;
    }

    /** Whether the buffer holds memory now: always unless on demand, which holds it from first use to discard. */
    public boolean isAllocated() {
        if (allocator == null) {
            return true;
        }
        synchronized (this) {
            return allocated != null;
        }
    }

    /**
     * On demand: gives the memory back to its allocator; the octets read as zeros again and memory is allocated
     * at the next use. Call it only when no work in progress uses the octets (a posted receive may stay posted:
     * it allocates again when something is placed). Slices from {@link #read} stay usable until released.
     * Nothing for a buffer registered with its memory.
     */
    public void discard() {
        if (allocator != null) {
            synchronized (this) {
                if (allocated != null) {
                    allocated.release();
                    allocated = null;
                    account.release(length);
                }
            }
        }
    }

    /** Deregistration: releases the table's reference, or an on-demand buffer's memory for good. */
    void release() {
        if (allocator == null) {
            memory.release();
            return;
        }
        synchronized (this) {
            released = true;
            discard();
        }
    }

    /** On demand, under the lock: the memory, allocated and zeroed on first use. */
    private ByteBuf allocated() {
        ByteBuf b = allocated;
        if (b == null) {
            if (released) {
                throw new IllegalStateException(String.format("STag 0x%08x is deregistered", stag));
            }
            if (!account.tryReserve(length)) {
                throw new MemoryRefusedException(String.format("STag 0x%08x: no budget for its %d octets", stag,
                        length));
            }
            try {
                b = allocator.directBuffer(length, length);
            } catch (OutOfMemoryError e) {
                account.release(length);
                throw e;
            }
            b.setZero(0, length); // RFC 5042: never show a peer what the allocator's memory held before
            b.writerIndex(length);
            allocated = b;
        }
        return b;
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
        placeAt((int) (to - baseTo), src, src.readerIndex(), len);
    }

    /**
     * Local placement at region offset {@code offset} (an untagged receive posted in this region): copies
     * {@code len} octets of {@code src} from {@code srcIndex}; indices unchanged. The caller checked the range.
     */
    @Override
    public void placeAt(int offset, ByteBuf src, int srcIndex, int len) {
        if (len == 0) {
            return; // nothing to place: an on-demand buffer stays without memory
        }
        if (allocator == null) {
            copy(src, srcIndex, memory, memory.readerIndex() + offset, len);
            return;
        }
        synchronized (this) {
            copy(src, srcIndex, allocated(), offset, len);
        }
    }

    /**
     * The source copies itself (src.getBytes), not the region (dst.setBytes): a ULPDU that spans socket reads
     * is a view of several buffers, and Netty 4.2's adaptive buffers implement setBytes by asking the source
     * for one NIO buffer, a merged heap copy of the whole payload; the source copies piece by piece. A source
     * does not check that the destination is still live, which setBytes did: checked here, so that memory
     * released meanwhile (a region deregistered and freed) is refused rather than written.
     */
    static void copy(ByteBuf src, int srcIndex, ByteBuf dst, int dstIndex, int len) {
        if (dst.refCnt() == 0) {
            throw new io.netty.util.IllegalReferenceCountException(0);
        }
        src.getBytes(srcIndex, dst, dstIndex, len);
    }

    /**
     * Direct memory only, and only for a buffer that has its memory: an on-demand one gets it on its first
     * placement ({@link #placeAt}, which also charges the memory budget), and has a view from then on. A
     * retained slice, so releasing the view never releases the region.
     */
    @Override
    public ByteBuf view(int offset, int length) {
        return view(offset, length, null);
    }

    /**
     * As {@link #view(int, int)}, the view taken from {@code views} (a stream's reused slices: no object per
     * segment once warm); {@code null}: a new slice.
     */
    public ByteBuf view(int offset, int length, RegionViews views) {
        if (length == 0) {
            return null;
        }
        if (allocator == null) {
            return memory.isDirect() ? slice(views, memory, memory.readerIndex() + offset, length).clear() : null;
        }
        synchronized (this) {
            ByteBuf b = allocated;
            return b != null && b.isDirect() ? slice(views, b, offset, length).clear() : null;
        }
    }

    private static ByteBuf slice(RegionViews views, ByteBuf memory, int index, int length) {
        return views != null ? views.slice(memory, index, length) : memory.retainedSlice(index, length);
    }

    /**
     * The octets {@code [to, to + len)} of the region, e.g. the source of an RDMA Read Response, as a
     * retained slice (no copy): the caller owns it and releases it.
     *
     * @throws IndexOutOfBoundsException if the range leaves the region
     */
    public ByteBuf read(long to, int len) {
        return read(to, len, null);
    }

    /**
     * As {@link #read(long, int)}, the slice taken from {@code views} (a stream's reused slices: no object per
     * message once warm); {@code null}: a new slice.
     */
    public ByteBuf read(long to, int len, RegionViews views) {
        if (!contains(to, len)) {
            throw outside(to, len);
        }
        if (allocator == null) {
            return slice(views, memory, memory.readerIndex() + (int) (to - baseTo), len);
        }
        synchronized (this) {
            return slice(views, allocated(), (int) (to - baseTo), len);
        }
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
        return String.format("TaggedBuffer{STag 0x%08x base TO 0x%016x length %d %s%s%s%s}", stag, baseTo, length,
                AccessFlags.describe(access), remoteInvalidate ? " remote-invalidate" : "",
                allocator != null ? " on-demand" : "", valid ? "" : " INVALID");
    }
}
