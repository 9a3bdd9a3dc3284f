package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * Netty's pooled allocator, counting the buffers asked of it and the octets of capacity asked for: set as a
 * channel's allocator, it shows what a handler allocates per message (a buffer grown in place by the allocator
 * is not a new buffer; the framer never grows one).
 */
final class CountingAllocator implements ByteBufAllocator {
    private final ByteBufAllocator delegate = PooledByteBufAllocator.DEFAULT;
    private int buffers;
    private long octets;

    int buffers() {
        return buffers;
    }

    long octets() {
        return octets;
    }

    void reset() {
        buffers = 0;
        octets = 0;
    }

    private ByteBuf count(ByteBuf b) {
        buffers++;
        octets += b.capacity();
        return b;
    }

    private CompositeByteBuf count(CompositeByteBuf b) {
        buffers++;
        return b;
    }

    @Override
    public ByteBuf buffer() {
        return count(delegate.buffer());
    }

    @Override
    public ByteBuf buffer(int initialCapacity) {
        return count(delegate.buffer(initialCapacity));
    }

    @Override
    public ByteBuf buffer(int initialCapacity, int maxCapacity) {
        return count(delegate.buffer(initialCapacity, maxCapacity));
    }

    @Override
    public ByteBuf ioBuffer() {
        return count(delegate.ioBuffer());
    }

    @Override
    public ByteBuf ioBuffer(int initialCapacity) {
        return count(delegate.ioBuffer(initialCapacity));
    }

    @Override
    public ByteBuf ioBuffer(int initialCapacity, int maxCapacity) {
        return count(delegate.ioBuffer(initialCapacity, maxCapacity));
    }

    @Override
    public ByteBuf heapBuffer() {
        return count(delegate.heapBuffer());
    }

    @Override
    public ByteBuf heapBuffer(int initialCapacity) {
        return count(delegate.heapBuffer(initialCapacity));
    }

    @Override
    public ByteBuf heapBuffer(int initialCapacity, int maxCapacity) {
        return count(delegate.heapBuffer(initialCapacity, maxCapacity));
    }

    @Override
    public ByteBuf directBuffer() {
        return count(delegate.directBuffer());
    }

    @Override
    public ByteBuf directBuffer(int initialCapacity) {
        return count(delegate.directBuffer(initialCapacity));
    }

    @Override
    public ByteBuf directBuffer(int initialCapacity, int maxCapacity) {
        return count(delegate.directBuffer(initialCapacity, maxCapacity));
    }

    @Override
    public CompositeByteBuf compositeBuffer() {
        return count(delegate.compositeBuffer());
    }

    @Override
    public CompositeByteBuf compositeBuffer(int maxNumComponents) {
        return count(delegate.compositeBuffer(maxNumComponents));
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer() {
        return count(delegate.compositeHeapBuffer());
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
        return count(delegate.compositeHeapBuffer(maxNumComponents));
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer() {
        return count(delegate.compositeDirectBuffer());
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
        return count(delegate.compositeDirectBuffer(maxNumComponents));
    }

    @Override
    public boolean isDirectBufferPooled() {
        return delegate.isDirectBufferPooled();
    }

    @Override
    public int calculateNewCapacity(int minNewCapacity, int maxCapacity) {
        return delegate.calculateNewCapacity(minNewCapacity, maxCapacity);
    }
}
