package dev.iwarp.rdmap;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** RFC 7306 arithmetic. */
class AtomicsTest {

    @Test
    void fetchAddWithoutMaskIsAPlainAdd() {
        assertEquals(0x0000000100000000L, Atomics.fetchAdd(0x00000000ffffffffL, 1, 0));
        assertEquals(0L, Atomics.fetchAdd(-1L, 1, 0), "wraps at 64 bits");
        assertEquals(0x123456789L + 0x987654321L, Atomics.fetchAdd(0x123456789L, 0x987654321L, 0));
    }

    @Test
    void fetchAddWithTwo32BitFields() {
        long mask = 0x8000000080000000L;
        // low field wraps to 0 without carrying into the high field, which gets its own +1
        assertEquals(0x0000000100000000L, Atomics.fetchAdd(0x00000000ffffffffL, 0x0000000100000001L, mask));
        assertEquals(0L, Atomics.fetchAdd(-1L, 0x0000000100000001L, mask));
        assertEquals(0x0000000500000007L, Atomics.fetchAdd(0x0000000200000003L, 0x0000000300000004L, mask));
        // a carry inside a field still propagates up to its top bit
        assertEquals(0x8000000080000000L, Atomics.fetchAdd(0x7fffffff7fffffffL, 0x0000000100000001L, mask));
    }

    @Test
    void fetchAddWithByteFields() {
        long mask = 0x8080808080808080L;
        assertEquals(0x00ff0100ff000304L, Atomics.fetchAdd(0xffff00ffff010203L, 0x0100010100ff0101L, mask));
    }

    @Test
    void swapTakesTheMaskedBits() {
        assertEquals(0x1111111122222222L, Atomics.swap(0xaaaaaaaabbbbbbbbL, 0x1111111122222222L, -1L));
        assertEquals(0xaaaaaaaa22222222L, Atomics.swap(0xaaaaaaaabbbbbbbbL, 0x1111111122222222L, 0xffffffffL));
        assertEquals(0xaaaaaaaabbbbbbbbL, Atomics.swap(0xaaaaaaaabbbbbbbbL, 0x1111111122222222L, 0));
    }

    @Test
    void compareSwapMatchAndMismatch() {
        long original = 0xaaaaaaaabbbbbbbbL;
        // match on the low half only (the high half differs but is outside the compare mask)
        assertEquals(0x11111111bbbbbbbbL, Atomics.compareSwap(original, 0x00000000bbbbbbbbL, 0x00000000ffffffffL,
                0x1111111122222222L, 0xffffffff00000000L));
        // mismatch in one compared bit: nothing changes
        assertEquals(original, Atomics.compareSwap(original, 0x00000000bbbbbbbaL, 0x00000000ffffffffL,
                0x1111111122222222L, -1L));
        // compare mask 0 always matches
        assertEquals(0x1111111122222222L, Atomics.compareSwap(original, 0, 0, 0x1111111122222222L, -1L));
        // full compare, full swap
        assertEquals(42L, Atomics.compareSwap(original, original, -1L, 42L, -1L));
    }
}
