package dev.iwarp.mpa.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.util.Arrays;

/**
 * The cumulation {@code FpduCumulator} keeps while an FPDU straddles socket reads: a read-only buffer
 * over the readable octets of the reads themselves (its parts), in order, never copied. Netty's
 * {@code CompositeByteBuf} does the same, but allocates a component object per read, and a composite
 * with its array per straddle: most of what a 64 KiB Write still allocated per message.
 * Its framer keeps this one and reuses it once released: nothing is allocated per read after its
 * arrays grew to the number of reads an FPDU spans.
 *
 * <p>Holds one reference to each part, given back when the part is discarded or this buffer is
 * released. Read-only: setters throw {@link java.nio.ReadOnlyBufferException}. Confined to the framer's event
 * loop, but may be released from any thread (a retained slice of a ULPDU lent from it). Reads across the
 * parts are {@link PartsView}'s; what a read-only view is whatever it views comes from
 * {@link ReadOnlyViewByteBuf}.
 */
public final class FpduCumulation extends PartsView {
    private ByteBufAllocator alloc;
    /** Set once deallocated: the framer may take it again. */
    private volatile boolean released;

    public FpduCumulation(ByteBufAllocator alloc) {
        super(Integer.MAX_VALUE);
        this.alloc = alloc;
    }

    /** Whether this buffer was released and may be taken again with {@link #reuse}. */
    public boolean reusable() {
        return released;
    }

    /** This buffer again, empty and with one reference. Only after {@link #reusable()}. */
    public FpduCumulation reuse(ByteBufAllocator alloc) {
        released = false;
        this.alloc = alloc;
        resetRefCnt();
        setIndex(0, 0);
        return this;
    }

    /**
     * {@code spare} taken again if it was released, else a new cumulation: the owner's first, or its last
     * one is still held (a retained slice of a ULPDU passed up from it). The owner keeps what this returns.
     */
    public static FpduCumulation takeAgain(FpduCumulation spare, ByteBufAllocator alloc) {
        return spare != null && spare.reusable() ? spare.reuse(alloc) : new FpduCumulation(alloc);
    }

    /** Appends {@code buf}'s readable octets as the last part, taking ownership of {@code buf}. */
    public FpduCumulation add(ByteBuf buf) {
        return add(buf, buf.readerIndex(), buf.readableBytes());
    }

    /** Appends {@code length} octets of {@code buf} from {@code index} as the last part, taking one reference. */
    public FpduCumulation add(ByteBuf buf, int index, int length) {
        if (count == parts.length) {
            parts = Arrays.copyOf(parts, count * 2);
            partIndex = Arrays.copyOf(partIndex, count * 2);
            partStart = Arrays.copyOf(partStart, count * 2 + 1);
        }
        parts[count] = buf;
        partIndex[count] = index;
        partStart[count + 1] = partStart[count] + length;
        count++;
        writerIndex(partStart[count]);
        return this;
    }

    /** Gives back the parts read entirely (below the reader index); indices move down accordingly. */
    public void discardReadParts() {
        int r = readerIndex();
        int d = 0;
        while (d < count && partStart[d + 1] <= r) {
            parts[d].release();
            d++;
        }
        if (d == 0) {
            return;
        }
        int removed = partStart[d];
        count -= d;
        System.arraycopy(parts, d, parts, 0, count);
        Arrays.fill(parts, count, count + d, null);
        System.arraycopy(partIndex, d, partIndex, 0, count);
        for (int i = 0; i <= count; i++) {
            partStart[i] = partStart[i + d] - removed;
        }
        last = 0;
        setIndex(r - removed, writerIndex() - removed);
        adjustMarkers(removed);
    }

    @Override
    public ByteBuf discardReadBytes() {
        discardReadParts();
        return this;
    }

    @Override
    public ByteBuf discardSomeReadBytes() {
        discardReadParts();
        return this;
    }

    @Override
    protected void deallocate() {
        for (int k = 0; k < count; k++) {
            parts[k].release();
            parts[k] = null;
        }
        count = 0;
        last = 0;
        released = true;
    }

    @Override
    public ByteBuf copy(int index, int length) {
        checkIndex(index, length);
        ByteBuf copy = alloc.buffer(length);
        try {
            getBytes(index, copy, 0, length);
            return copy.writerIndex(length);
        } catch (Throwable t) {
            copy.release();
            throw t;
        }
    }

    @Override
    public ByteBufAllocator alloc() {
        return alloc;
    }
}
