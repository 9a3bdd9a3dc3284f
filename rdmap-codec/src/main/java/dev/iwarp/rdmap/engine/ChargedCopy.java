package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.MemoryAccount;
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
 * One charged copy of a Read Response segment's payload ({@link ChargedCopies}): a buffer of its own reference count
 * over a copy taken from the channel's allocator, reused once released instead of a wrapper object per segment. Its
 * slices and duplicates are Netty's derived buffers, which share this buffer's reference count: whoever makes the
 * last release (the transmitter, the MPA framer's slice of it, the outbound buffer at close), the copy is released
 * and its octets given back to the account then, once. Not for use after its last release (as any released buffer).
 */
final class ChargedCopy extends AbstractReferenceCountedByteBuf {
    private final ChargedCopies owner;
    /** The copy; null while released. */
    private ByteBuf memory;
    private MemoryAccount account;
    private int length;

    ChargedCopy(ChargedCopies owner) {
        super(0);
        this.owner = owner;
    }

    /**
     * Wraps {@code copy} (taken: released with this buffer), whose first {@code length} octets were charged to
     * {@code account}; empty, for the caller to fill up to {@code length}.
     */
    ChargedCopy wrap(ByteBuf copy, MemoryAccount account, int length) {
        memory = copy;
        this.account = account;
        this.length = length;
        maxCapacity(length);
        resetRefCnt();
        setIndex(0, 0).markReaderIndex().markWriterIndex(); // no mark of the previous copy survives
        return this;
    }

    @Override
    protected void deallocate() {
        ByteBuf c = memory;
        memory = null;
        c.release();
        account.release(length);
        owner.released(this);
    }

    @Override
    public int capacity() {
        return length;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        throw new UnsupportedOperationException("a charged copy has a fixed size");
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
        return memory.arrayOffset();
    }

    @Override
    public boolean hasMemoryAddress() {
        return memory.hasMemoryAddress();
    }

    @Override
    public long memoryAddress() {
        return memory.memoryAddress();
    }

    @Override
    public boolean isContiguous() {
        return memory.isContiguous();
    }

    @Override
    protected byte _getByte(int index) {
        return memory.getByte(index);
    }

    @Override
    protected short _getShort(int index) {
        return memory.getShort(index);
    }

    @Override
    protected short _getShortLE(int index) {
        return memory.getShortLE(index);
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        return memory.getUnsignedMedium(index);
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        return memory.getUnsignedMediumLE(index);
    }

    @Override
    protected int _getInt(int index) {
        return memory.getInt(index);
    }

    @Override
    protected int _getIntLE(int index) {
        return memory.getIntLE(index);
    }

    @Override
    protected long _getLong(int index) {
        return memory.getLong(index);
    }

    @Override
    protected long _getLongLE(int index) {
        return memory.getLongLE(index);
    }

    @Override
    protected void _setByte(int index, int value) {
        memory.setByte(index, value);
    }

    @Override
    protected void _setShort(int index, int value) {
        memory.setShort(index, value);
    }

    @Override
    protected void _setShortLE(int index, int value) {
        memory.setShortLE(index, value);
    }

    @Override
    protected void _setMedium(int index, int value) {
        memory.setMedium(index, value);
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        memory.setMediumLE(index, value);
    }

    @Override
    protected void _setInt(int index, int value) {
        memory.setInt(index, value);
    }

    @Override
    protected void _setIntLE(int index, int value) {
        memory.setIntLE(index, value);
    }

    @Override
    protected void _setLong(int index, long value) {
        memory.setLong(index, value);
    }

    @Override
    protected void _setLongLE(int index, long value) {
        memory.setLongLE(index, value);
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        checkIndex(index, length);
        memory.getBytes(index, dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
        checkIndex(index, length);
        memory.getBytes(index, dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        checkIndex(index, dst.remaining());
        memory.getBytes(index, dst);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
        checkIndex(index, length);
        memory.getBytes(index, out, length);
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
        checkIndex(index, length);
        return memory.getBytes(index, out, length);
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
        checkIndex(index, length);
        return memory.getBytes(index, out, position, length);
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
        checkIndex(index, length);
        src.getBytes(srcIndex, memory, index, length);
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
        checkIndex(index, length);
        memory.setBytes(index, src, srcIndex, length);
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        checkIndex(index, src.remaining());
        memory.setBytes(index, src);
        return this;
    }

    @Override
    public int setBytes(int index, InputStream in, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(index, in, length);
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(index, in, length);
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int length) throws IOException {
        checkIndex(index, length);
        return memory.setBytes(index, in, position, length);
    }

    @Override
    public ByteBuf copy(int index, int length) {
        checkIndex(index, length);
        return memory.copy(index, length);
    }

    @Override
    public int nioBufferCount() {
        return memory.nioBufferCount();
    }

    @Override
    public ByteBuffer nioBuffer(int index, int length) {
        checkIndex(index, length);
        return memory.nioBuffer(index, length);
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int length) {
        checkIndex(index, length);
        return memory.internalNioBuffer(index, length);
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int length) {
        checkIndex(index, length);
        return memory.nioBuffers(index, length);
    }
}
