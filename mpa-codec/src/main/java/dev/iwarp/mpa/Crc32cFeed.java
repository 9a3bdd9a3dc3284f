package dev.iwarp.mpa;

import dev.iwarp.mpa.internal.FpduCumulation;
import dev.iwarp.framing.Crc32c;
import io.netty.buffer.AbstractByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Feeds {@link ByteBuf} regions to a {@link CRC32C} like {@link Crc32c#update}, but for direct
 * buffers without building a NIO view per call: it keeps one view over the whole memory of the
 * buffer a region lies in (the root of a slice, e.g. a registered region or a receive buffer) and
 * only moves that view's position and limit while later regions lie in the same memory. A slice of
 * a direct buffer otherwise costs a fresh {@code ByteBuffer} (64-128 B) for every FPDU.
 *
 * <p>The view is chosen by address range alone: a region is read through it only when
 * {@code [memoryAddress + index, + length)} lies inside the view's range, and the caller holds the
 * region's buffer while it is read, so the octets read are always the region's own, whatever became
 * of the buffer the view was first taken from. The view keeps that buffer's NIO object reachable
 * until the next rebase (never its pooled memory: freeing memory does not depend on it).
 *
 * <p>A buffer of Netty's adaptive allocator (the default receive buffer) reports no parent through
 * {@code unwrap()}, and builds its own NIO view once per allocation: as a receive buffer that is one
 * view per socket read, 40 % of the octets a CRC-checked 64 KiB message allocated. The
 * feed therefore reads the buffer's chunk (its {@code rootParent}, the memory all its receive buffers
 * are cut from) where the JVM lets it, and keeps one view over that chunk; where it cannot, it
 * views the buffer itself as before.
 *
 * <p>Not thread-safe: one per direction of a framer, confined to its event loop.
 */
final class Crc32cFeed {
    /** The adaptive allocator's buffer class and a handle on its chunk, or nulls where the JVM hides them. */
    private static final Class<?> ADAPTIVE_BUF;
    private static final VarHandle ADAPTIVE_ROOT;

    static {
        Class<?> type = null;
        VarHandle root = null;
        try {
            type = Class.forName("io.netty.buffer.AdaptivePoolingAllocator$AdaptiveByteBuf", false,
                    ByteBuf.class.getClassLoader());
            root = MethodHandles.privateLookupIn(type, MethodHandles.lookup())
                    .findVarHandle(type, "rootParent", AbstractByteBuf.class);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LoggerFactory.getLogger(MpaFramer.class).debug(
                    "CRC32C takes a view per adaptive receive buffer (its chunk is not reachable: {})", e.toString());
            type = null;
            root = null;
        }
        ADAPTIVE_BUF = type;
        ADAPTIVE_ROOT = root;
    }

    /** Regions up to this long that the view does not cover go through {@link #scratch}. */
    static final int SCRATCH_LENGTH = 2048;
    private ByteBuffer view;
    private long viewAddress;
    private int viewCapacity;
    /** Taken at the first short region outside the view: an idle connection does not pay for it. */
    private byte[] scratch;

    /** Adds {@code length} octets of {@code buf} starting at {@code index} to {@code crc}; indexes unchanged. */
    void update(CRC32C crc, ByteBuf buf, int index, int length) {
        if (length == 0) {
            return;
        }
        if (buf instanceof FpduCumulation) { // an FPDU that straddled reads (FpduCumulator): part by part
            updateCumulation(crc, (FpduCumulation) buf, index, length);
            return;
        }
        if (buf instanceof CompositeByteBuf) { // e.g. a ULPDU split by markers: part by part
            updateComposite(crc, (CompositeByteBuf) buf, index, length);
            return;
        }
        // a pooled buffer of its own (not a slice) caches its NIO view for as long as it holds its memory;
        // the adaptive allocator's buffers take a new one per buffer, and slices one per call: those go
        // through the view kept here (receive buffers that reuse the same memory then need none)
        if (buf.hasArray() || !buf.hasMemoryAddress()
                || (buf.unwrap() == null && buf.alloc() instanceof PooledByteBufAllocator)) {
            Crc32c.update(crc, buf, index, length);
            return;
        }
        long address = buf.memoryAddress() + index;
        if (!covers(address, length)) {
            if (length <= SCRATCH_LENGTH) {
                // a short region in memory the view does not cover: copying it costs less than a new view
                // (an adaptive receive buffer that moved, e.g. as our own small FPDUs take the same size class)
                byte[] b = scratch;
                if (b == null) {
                    b = scratch = new byte[SCRATCH_LENGTH];
                }
                buf.getBytes(index, b, 0, length);
                crc.update(b, 0, length);
                return;
            }
            if (!(rebase(buf) && covers(address, length))) {
                Crc32c.update(crc, buf, index, length);
                return;
            }
        }
        int at = (int) (address - viewAddress);
        // limit first when it grows past the old limit, position first otherwise
        if (at + length > view.limit()) {
            view.limit(at + length).position(at);
        } else {
            view.position(at).limit(at + length);
        }
        crc.update(view);
    }

    private void updateCumulation(CRC32C crc, FpduCumulation cumulation, int index, int length) {
        for (int k = cumulation.partOf(index); length > 0; k++) {
            int n = Math.min(length, cumulation.partStart(k + 1) - index);
            update(crc, cumulation.part(k), cumulation.partIndex(k) + index - cumulation.partStart(k), n);
            index += n;
            length -= n;
        }
    }

    private void updateComposite(CRC32C crc, CompositeByteBuf composite, int index, int length) {
        for (int i = composite.toComponentIndex(index); length > 0; i++) {
            ByteBuf part = composite.internalComponent(i); // a slice the composite caches
            int local = index - composite.toByteIndex(i);
            int n = Math.min(length, part.capacity() - local);
            update(crc, part, local, n);
            index += n;
            length -= n;
        }
    }

    /** The buffer whose memory {@code buf}'s lies in: its root through unwrap(), or an adaptive buffer's chunk. */
    static ByteBuf memoryRoot(ByteBuf buf) {
        ByteBuf root = buf;
        for (ByteBuf u = root.unwrap(); u != null; u = u.unwrap()) {
            root = u;
        }
        if (ADAPTIVE_ROOT != null && root.getClass() == ADAPTIVE_BUF) {
            // the caller holds buf, so its chunk is set and holds its memory
            ByteBuf chunk = (ByteBuf) ADAPTIVE_ROOT.get(root);
            if (chunk != null) {
                return chunk;
            }
        }
        return root;
    }

    private boolean covers(long address, int length) {
        return view != null && address >= viewAddress && address + length <= viewAddress + viewCapacity;
    }

    /** Takes a view of the memory of the buffer {@code buf} is derived from; false when there is none. */
    private boolean rebase(ByteBuf buf) {
        ByteBuf root = memoryRoot(buf);
        if (!root.hasMemoryAddress() || root.nioBufferCount() != 1) {
            return false;
        }
        int capacity = root.capacity();
        ByteBuffer v = root.nioBuffer(0, capacity);
        if (!v.isDirect() || PlatformDependent.directBufferAddress(v) != root.memoryAddress()) {
            return false;
        }
        view = v;
        viewAddress = root.memoryAddress();
        viewCapacity = capacity;
        return true;
    }
}
