package dev.iwarp.rdmap.engine;

import io.netty.buffer.ByteBuf;

import java.util.IdentityHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Test memory: regions with canary octets around them, patterns, and octet comparisons. */
final class Regions {
    static final int CANARY = 0xEE;

    /** Regions made by {@link #guarded} and the buffers around them. */
    private final Map<ByteBuf, ByteBuf> guards = new IdentityHashMap<>();

    /** A region of {@code size} octets inside a buffer with 32 canary octets on each side. */
    ByteBuf guarded(EngineSide side, int size) {
        ByteBuf whole = side.buffer(size + 64, CANARY);
        ByteBuf region = whole.slice(32, size);
        guards.put(region, whole);
        return region;
    }

    /** Asserts that nothing was written just before or after a {@link #guarded} region. */
    void assertCanaries(ByteBuf region) {
        ByteBuf whole = guards.get(region);
        byte[] before = bytes(whole, 0, 32);
        byte[] after = bytes(whole, 32 + region.capacity(), 32);
        for (int i = 0; i < 32; i++) {
            assertEquals((byte) CANARY, before[i], "octet before the region at " + i);
            assertEquals((byte) CANARY, after[i], "octet after the region at " + i);
        }
    }

    /** Asserts that a {@link #guarded} region still holds only canaries: nothing was placed in it. */
    void assertUntouched(ByteBuf region) {
        byte[] content = bytes(region, 0, region.capacity());
        for (int i = 0; i < content.length; i++) {
            assertEquals((byte) CANARY, content[i], "nothing placed at " + i);
        }
        assertCanaries(region);
    }

    static void fillPattern(ByteBuf b, int seed) {
        byte[] a = new byte[b.capacity()];
        for (int i = 0; i < a.length; i++) {
            a[i] = (byte) (i * 31 + seed);
        }
        b.setBytes(0, a); // one access: the paranoid leak detector records every access
    }

    static byte[] bytes(ByteBuf b, int index, int len) {
        byte[] a = new byte[len];
        b.getBytes(index, a);
        return a;
    }
}
