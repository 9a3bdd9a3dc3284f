package dev.iwarp.verbs;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A region registered from a pooled buffer hands out recycled derived buffers: every work request
 * and every segment slices it, and an unpooled slice is a new object each time.
 */
class RegisteredMemorySlicesTest {

    private static ByteBuf unwrapLeakAware(ByteBuf b) {
        // the build's paranoid leak detection wraps derived buffers; look at what it wraps
        return b.getClass().getSimpleName().contains("LeakAware") ? b.unwrap() : b;
    }

    @Test
    void slicesOfAPooledRegionAreRecycledDerivedBuffers() {
        RdmaDevice device = new RdmaDevice();
        ByteBuf memory = PooledByteBufAllocator.DEFAULT.directBuffer(4096, 4096).writeZero(4096);
        try {
            MemoryRegion mr = device.allocPd().register(memory, Access.LOCAL_WRITE);
            assertEquals(4096, mr.memory().readableBytes());
            ByteBuf slice = mr.memory().retainedSlice(100, 1000);
            try {
                assertEquals("PooledSlicedByteBuf", unwrapLeakAware(slice).getClass().getSimpleName());
                ByteBuf segment = slice.retainedSlice(10, 500);
                assertEquals("PooledSlicedByteBuf", unwrapLeakAware(segment).getClass().getSimpleName());
                segment.release();
            } finally {
                slice.release();
            }
            assertEquals(2, memory.refCnt(), "the device holds one reference until deregistration");
            mr.deregister();
            assertEquals(1, memory.refCnt());
        } finally {
            device.close();
            memory.release();
        }
    }
}
