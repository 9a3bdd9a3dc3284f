package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * How {@link MpaFramer} collects an FPDU that straddles socket reads. A read of at least
 * {@link #COMPONENT_MIN} octets joins a composite cumulation as a component, never copied. A shorter
 * one is copied: into the room left in a plain cumulation, or else into a new plain buffer that grows
 * by powers of two as Netty's merge cumulator does, so a peer sending an octet at a time costs
 * amortised constant work per octet. Netty's default merge cumulator copied each octet of a 64 KiB
 * FPDU that arrived in pieces once into the cumulation and again each time the cumulation grew:
 * profiled at three times the copying placement itself does (issue 13).
 *
 * <p>Takes ownership of {@code in} and of {@code cumulation}, as every {@link ByteToMessageDecoder.Cumulator}.
 */
final class FpduCumulator implements ByteToMessageDecoder.Cumulator {
    /** Reads at least this long become components; shorter ones are copied. */
    static final int COMPONENT_MIN = 2048;
    /** Components of a composite cumulation before Netty consolidates them (a bound, rarely reached). */
    static final int MAX_COMPONENTS = 256;

    static final FpduCumulator INSTANCE = new FpduCumulator();

    private FpduCumulator() {
    }

    @Override
    public ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        if (!cumulation.isReadable()) {
            cumulation.release();
            return in;
        }
        // ULPDUs sliced from the cumulation may still be alive (refCnt > 1): never write into it then
        boolean owned = cumulation.refCnt() == 1 && !cumulation.isReadOnly();
        int n = in.readableBytes();
        if (n < COMPONENT_MIN) {
            return owned && !(cumulation instanceof CompositeByteBuf) && cumulation.writableBytes() >= n
                    ? append(cumulation, in) : merge(alloc, cumulation, in);
        }
        if (owned && cumulation instanceof CompositeByteBuf) {
            CompositeByteBuf composite = (CompositeByteBuf) cumulation;
            if (composite.writerIndex() != composite.capacity()) {
                composite.capacity(composite.writerIndex()); // a component goes after the capacity
            }
            return composite.addFlattenedComponents(true, in); // releases in if it fails
        }
        CompositeByteBuf composite = alloc.compositeBuffer(MAX_COMPONENTS);
        try {
            composite.addFlattenedComponents(true, cumulation);
        } catch (Throwable t) { // cumulation was released by addFlattenedComponents
            composite.release();
            in.release();
            throw t;
        }
        try {
            return composite.addFlattenedComponents(true, in);
        } catch (Throwable t) {
            composite.release();
            throw t;
        }
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
     * each buffer per copy on the adaptive allocator (issue 13: one per short read).
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
