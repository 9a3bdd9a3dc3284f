package dev.iwarp.ddp;

import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;

/**
 * A slice of registered memory that is pointed at another range once released: what {@link RegionViews} hands
 * out instead of a new slice object per segment or message. While pointed it holds one reference to the memory
 * (the region cannot be freed under it) and its capacity is exactly its range: nothing is read or written outside
 * it. Its own reference count starts at 1; when it reaches 0 the memory's reference is released and the view
 * goes back to its {@link RegionViews}. Not for use after its last release (as any released buffer).
 */
final class RegionView extends AbstractReferenceCountedByteBuf {
    private final RegionViews owner;
    /** The memory viewed; null while released. */
    private ByteBuf memory;
    /** Index in {@link #memory} of this view's index 0. */
    private int adjustment;
    private int length;

    RegionView(RegionViews owner) {
        super(0);
        this.owner = owner;
    }

    /** Points this released view at {@code [index, index + length)} of {@code memory} (retained): readable whole. */
    RegionView point(ByteBuf memory, int index, int length) {
        memory.retain();
        this.memory = memory;
        adjustment = index;
        this.length = length;
        maxCapacity(length);
        resetRefCnt();
        setIndex(0, 0).markReaderIndex().markWriterIndex(); // no mark of the previous range survives
        writerIndex(length);
        return this;
    }

    @Override
    protected void deallocate() {
        ByteBuf m = memory;
        memory = null;
        m.release();
        owner.released(this);
    }

    private int idx(int index) {
        return index + adjustment;
    }

    /** Another view from the same pool: no slice object per segment of a message. */
    @Override
    public ByteBuf retainedSlice(int index, int length) {
        checkIndex(index, length);
        return owner.slice(memory, idx(index), length);
    }

    @Override
    public ByteBuf retainedSlice() {
        return retainedSlice(readerIndex(), readableBytes());
    }

    @Override
    public int capacity() {
        return length;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        throw new UnsupportedOperationException("a view of registered memory has a fixed range");
    }

    @Override
    public ByteBufAllocator alloc() {
        return memory.alloc();
    }

    @Override
    @SuppressWarnings("deprecation")
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return memory;
    }

    @Override
    public boolean isDirect() {
        return memory.isDirect();
    }

    @Override
    public boolean hasArray() {
        return memory.hasArray();
    }

    @Override
    public byte[] array() {
        return memory.array();
    }

    @Override
    public int arrayOffset() {
        return idx(memory.arrayOffset());
    }

    @Override
    public boolean hasMemoryAddress() {
        return memory.hasMemoryAddress();
    }

    @Override
    public long memoryAddress() {
        return memory.memoryAddress() + adjustment;
    }

    @Override
    public boolean isContiguous() {
        return memory.isContiguous();
    }

    @Override
    protected byte _getByte(int index) {
        return memory.getByte(idx(index));
    }

    @Override
    protected short _getShort(int index) {
        return memory.getShort(idx(index));
    }

    @Override
    protected short _getShortLE(int index) {
        return memory.getShortLE(idx(index));
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        return memory.getUnsignedMedium(idx(index));
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        return memory.getUnsignedMediumLE(idx(index));
    }

    @Override
    protected int _getInt(int index) {
        return memory.getInt(idx(index));
    }

    @Override
    protected int _getIntLE(int index) {
        return memory.getIntLE(idx(index));
    }

    @Override
    protected long _getLong(int index) {
        return memory.getLong(idx(index));
    }

    @Override
    protected long _getLongLE(int index) {
        return memory.getLongLE(idx(index));
    }

    @Override
    protected void _setByte(int index, int value) {
        memory.setByte(idx(index), value);
    }

    @Override
    protected void _setShort(int index, int value) {
        memory.setShort(idx(index), value);
    }

    @Override
    protected void _setShortLE(int index, int value) {
        memory.setShortLE(idx(index), value);
    }

    @Override
    protected void _setMedium(int index, int value) {
        memory.setMedium(idx(index), value);
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        memory.setMediumLE(idx(index), value);
    }

    @Override
    protected void _setInt(int index, int value) {
        memory.setInt(idx(index), value);
    }

    @Override
    protected void _setIntLE(int index, int value) {
        memory.setIntLE(idx(index), value);
    }

    @Override
    protected void _setLong(int index, long value) {
        memory.setLong(idx(index), value);
    }

    @Override
    protected void _setLongLE(int index, long value) {
        memory.setLongLE(idx(index), value);
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        checkIndex(index, length);
        memory.getBytes(idx(index), dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
        checkIndex(index, length);
        memory.getBytes(idx(index), dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        checkIndex(index, dst.remaining());
        memory.getBytes(idx(index), dst);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
        checkIndex(index, length);
        memory.getBytes(idx(index), out, length);
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
        checkIndex(index, length);
        return memory.getBytes(idx(index), out, length);
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
        checkIndex(index, length);
        return memory.getBytes(idx(index), out, position, length);
    }

    /** The source copies itself, as {@link TaggedBuffer#placeAt} has it (a ULPDU may span several buffers). */
    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
        checkIndex(index, length);
        src.getBytes(srcIndex, memory, idx(index), length);
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
        checkIndex(index, length);
        memory.setBytes(idx(index), src, srcIndex, length);
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        checkIndex(index, src.remaining());
        memory.setBytes(idx(index), src);
        return this;
    }

    @Override
    public int setBytes(int index, InputStream in, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(idx(index), in, length);
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(idx(index), in, length);
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(idx(index), in, position, length);
    }

    @Override
    public ByteBuf copy(int index, int length) {
        checkIndex(index, length);
        return memory.copy(idx(index), length);
    }

    @Override
    public int nioBufferCount() {
        return memory.nioBufferCount();
    }

    @Override
    public ByteBuffer nioBuffer(int index, int length) {
        checkIndex(index, length);
        return memory.nioBuffer(idx(index), length);
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int length) {
        checkIndex(index, length);
        return memory.internalNioBuffer(idx(index), length);
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int length) {
        checkIndex(index, length);
        return memory.nioBuffers(idx(index), length);
    }
}
