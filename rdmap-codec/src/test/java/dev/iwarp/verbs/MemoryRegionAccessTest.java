package dev.iwarp.verbs;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A region's access rights are what it was registered with, read-only, and regions with the same rights share
 * one set: a server holding many idle connections keeps no set per region.
 */
class MemoryRegionAccessTest {
    @Test
    void regionsWithTheSameRightsShareOneReadOnlySet() {
        ByteBuf memory = Unpooled.directBuffer(64, 64);
        try (RdmaDevice device = new RdmaDevice()) {
            ProtectionDomain pd = device.allocPd();
            MemoryRegion a = pd.register(memory, Access.REMOTE_WRITE, Access.LOCAL_WRITE);
            MemoryRegion b = pd.register(memory, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.LOCAL_WRITE);
            MemoryRegion c = pd.registerOnDemand(64, UnpooledByteBufAllocator.DEFAULT, Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE);
            MemoryRegion none = pd.register(memory);
            MemoryRegion all = pd.register(memory, Access.values());

            assertEquals(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE), a.access());
            assertSame(a.access(), b.access(), "same rights, one set");
            assertSame(a.access(), c.access(), "on demand too");
            assertEquals(Set.of(), none.access());
            assertEquals(EnumSet.allOf(Access.class), all.access());
            assertThrows(UnsupportedOperationException.class, () -> a.access().add(Access.REMOTE_READ));
            assertEquals(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE), b.access(), "unchanged");
        } finally {
            memory.release();
        }
    }
}
