package dev.iwarp.vitcp.vi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;

import java.util.List;

/** Copies between descriptors' data segments and segment payloads. */
final class ScatterGather {
    private ScatterGather() {
    }

    /**
     * {@code length} octets of the segments from message offset {@code offset}, as retained slices of the registered
     * buffers (no copy). Returns null if a region is no longer valid. Ownership: the caller owns the result.
     */
    static ByteBuf gather(ByteBufAllocator alloc, List<ViDataSegment> segments, long offset, int length) {
        if (length == 0) {
            return Unpooled.EMPTY_BUFFER;
        }
        CompositeByteBuf composite = null;
        ByteBuf single = null;
        long pos = 0;
        int remaining = length;
        for (ViDataSegment s : segments) {
            long end = pos + s.length();
            if (end > offset && remaining > 0) {
                if (!s.valid()) {
                    release(single, composite);
                    return null;
                }
                int from = (int) Math.max(0, offset - pos);
                int n = Math.min(remaining, s.length() - from);
                ByteBuf slice;
                try {
                    slice = s.region().buffer().retainedSlice(s.index() + from, n);
                } catch (IllegalReferenceCountException e) {
                    release(single, composite); // deregistered by another thread just now
                    return null;
                }
                if (single == null && composite == null) {
                    single = slice;
                } else {
                    if (composite == null) {
                        composite = alloc.compositeBuffer(Math.max(2, segments.size()));
                        composite.addComponent(true, single);
                        single = null;
                    }
                    composite.addComponent(true, slice);
                }
                offset += n;
                remaining -= n;
            }
            pos = end;
            if (remaining == 0) {
                break;
            }
        }
        return composite != null ? composite : single;
    }

    private static void release(ByteBuf a, ByteBuf b) {
        if (a != null) {
            a.release();
        }
        if (b != null) {
            b.release();
        }
    }

    /** Copies {@code src} (not consumed, not released) into the segments at message offset {@code offset}. */
    static boolean scatter(List<ViDataSegment> segments, long offset, ByteBuf src) {
        int srcIndex = src.readerIndex();
        int remaining = src.readableBytes();
        long pos = 0;
        for (ViDataSegment s : segments) {
            long end = pos + s.length();
            if (end > offset && remaining > 0) {
                if (!s.valid()) {
                    return false;
                }
                int from = (int) Math.max(0, offset - pos);
                int n = Math.min(remaining, s.length() - from);
                if (!place(s.region(), s.index() + from, src, srcIndex, n)) {
                    return false;
                }
                srcIndex += n;
                offset += n;
                remaining -= n;
            }
            pos = end;
            if (remaining == 0) {
                break;
            }
        }
        return remaining == 0;
    }

    /**
     * Copies into a region's buffer; false if the region was deregistered (possibly concurrently, from another
     * thread: its buffer is then released and Netty refuses the access, so nothing is written).
     */
    static boolean place(ViMemoryRegion region, int index, ByteBuf src, int srcIndex, int length) {
        if (!region.isValid()) {
            return false;
        }
        try {
            // the source copies itself: a segment received over several reads is a view of several buffers, and
            // the region's setBytes would ask it for one merged NIO buffer (a heap copy of the whole payload);
            // a source does not check that the destination is live, so that check is made first
            ByteBuf dst = region.buffer();
            if (dst.refCnt() == 0) {
                return false;
            }
            src.getBytes(srcIndex, dst, index, length);
            return true;
        } catch (IllegalReferenceCountException e) {
            return false;
        }
    }

    /**
     * A writable view (writer index 0, capacity {@code length}) of the memory that holds octets
     * {@code [offset, offset + length)} of a descriptor's data segments, for a payload read straight into it; null
     * when the range spans more than one data segment, a region is no longer valid, or its memory is not direct
     * (a socket read into heap memory goes through a direct buffer first: no copy would be saved). The caller owns
     * the view (it holds the region's memory until released).
     */
    static ByteBuf destination(List<ViDataSegment> segments, long offset, int length) {
        long pos = 0;
        for (ViDataSegment s : segments) {
            long end = pos + s.length();
            if (end > offset) {
                if (offset + length > end || !s.valid()) {
                    return null;
                }
                return destination(s.region(), (int) (s.index() + offset - pos), length);
            }
            pos = end;
        }
        return null;
    }

    /** A writable view of {@code length} octets of {@code region} at {@code index}, else as the one above. */
    static ByteBuf destination(ViMemoryRegion region, int index, int length) {
        ByteBuf memory = region.buffer();
        if (!region.isValid() || !memory.isDirect()) {
            return null;
        }
        try {
            return memory.retainedSlice(index, length).clear();
        } catch (IllegalReferenceCountException e) {
            return null; // deregistered by another thread just now
        }
    }

    /** Whether the data segments that hold octets {@code [offset, offset + length)} are all still valid. */
    static boolean valid(List<ViDataSegment> segments, long offset, int length) {
        long pos = 0;
        for (ViDataSegment s : segments) {
            long end = pos + s.length();
            if (end > offset && pos < offset + length && !s.valid()) {
                return false;
            }
            pos = end;
        }
        return true;
    }

    static boolean allValid(List<ViDataSegment> segments, ViProtectionDomain pd) {
        for (ViDataSegment s : segments) {
            if (!s.valid() || s.region().protectionDomain() != pd) {
                return false;
            }
        }
        return true;
    }
}
