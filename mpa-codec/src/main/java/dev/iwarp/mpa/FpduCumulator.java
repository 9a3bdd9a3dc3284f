package dev.iwarp.mpa;

import dev.iwarp.mpa.internal.FpduCumulation;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * How {@link MpaFramer} collects an FPDU that straddles socket reads. A read of at least
 * {@link #COMPONENT_MIN} octets joins an {@link FpduCumulation} as a part, never copied: the framer's
 * own cumulation buffer, taken again once released, so a straddle allocates nothing (Netty's
 * composite allocated a component per read and a composite per straddle). A shorter read is copied:
 * into the room left in a plain cumulation, or else into a new plain buffer that grows by powers of
 * two as Netty's merge cumulator does, so a peer sending an octet at a time costs amortised constant
 * work per octet and holds no receive buffer per octet. Netty's default merge cumulator copied each
 * octet of a 64 KiB FPDU that arrived in pieces once into the cumulation and again each time the
 * cumulation grew: profiled at three times the copying placement itself does.
 *
 * <p>Takes ownership of {@code in} and of {@code cumulation}, as every {@link ByteToMessageDecoder.Cumulator}.
 * One per framer (it keeps the framer's cumulation buffer); confined to its event loop.
 */
final class FpduCumulator implements ByteToMessageDecoder.Cumulator {
    /** Reads at least this long become parts; shorter ones are copied. */
    static final int COMPONENT_MIN = 2048;
    /** Parts of a cumulation before reads are copied instead (a bound, rarely reached). */
    static final int MAX_PARTS = 256;

    /** The cumulation buffer last taken: taken again once released. */
    private FpduCumulation spare;

    @Override
    public ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        if (!cumulation.isReadable()) {
            cumulation.release();
            return in;
        }
        int n = in.readableBytes();
        if (cumulation instanceof FpduCumulation) {
            FpduCumulation parts = (FpduCumulation) cumulation;
            // a ULPDU lent from it may still be alive in a retained slice (refCnt > 1): never change it then
            if (parts.refCnt() == 1) {
                parts.discardReadParts();
                if (n >= COMPONENT_MIN && parts.parts() < MAX_PARTS) {
                    return parts.add(in);
                }
            }
            return merge(alloc, cumulation, in);
        }
        if (n < COMPONENT_MIN) {
            boolean owned = cumulation.refCnt() == 1 && !cumulation.isReadOnly()
                    && !(cumulation instanceof CompositeByteBuf);
            return owned && cumulation.writableBytes() >= n ? append(cumulation, in) : merge(alloc, cumulation, in);
        }
        spare = FpduCumulation.takeAgain(spare, alloc);
        return spare.add(cumulation).add(in);
    }

    private static ByteBuf append(ByteBuf cumulation, ByteBuf in) {
        try {
            return copy(in, cumulation);
        } finally {
            in.release();
        }
    }

    /**
     * Appends {@code src}'s readable octets to {@code dst} through the source's getBytes: between buffers
     * with memory addresses a plain memory copy, where {@code dst.writeBytes(src)} builds an NIO view of
     * each buffer per copy on the adaptive allocator (one per short read).
     */
    private static ByteBuf copy(ByteBuf src, ByteBuf dst) {
        int n = src.readableBytes();
        dst.ensureWritable(n);
        src.getBytes(src.readerIndex(), dst, dst.writerIndex(), n);
        return dst.writerIndex(dst.writerIndex() + n);
    }

    private static ByteBuf merge(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        int need = cumulation.readableBytes() + in.readableBytes();
        ByteBuf merged = alloc.buffer(alloc.calculateNewCapacity(need, Integer.MAX_VALUE));
        try {
            copy(in, copy(cumulation, merged));
        } catch (Throwable t) { // the decoder still owns the cumulation
            merged.release();
            in.release();
            throw t;
        }
        cumulation.release();
        in.release();
        return merged;
    }
}
