package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.MemoryBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The charge of a Read Response segment's copy (CRC on, RFC 5044 §4.4) is given back at the copy's last release,
 * whoever makes it: the MPA framer writes slices of a ULPDU between markers (RFC 5044 §4.3), and such a slice can
 * outlive the copy's own reference. The copy's wrapper is reused, not made per segment.
 */
class ChargedCopiesTest {
    private final MemoryBudget budget = MemoryBudget.of(1 << 20);
    private final ByteBufAllocator copies = ChargedCopies.of(budget.newAccount(), null, Runnable::run,
            PooledByteBufAllocator.DEFAULT);

    private ByteBuf copyOf(int n) {
        ByteBuf c = copies.directBuffer(n, n);
        for (int i = 0; i < n; i++) {
            c.writeByte(i);
        }
        return c;
    }

    @Test
    void aCopyIsChargedUntilItsLastRelease() {
        ByteBuf c = copyOf(1000);
        assertEquals(1000, budget.committed());
        assertEquals(1000, c.readableBytes());
        assertEquals(1000, c.capacity());
        assertTrue(c.release());
        assertEquals(0, budget.committed());
    }

    @Test
    void aSliceThatMakesTheLastReleaseGivesTheChargeBack() {
        ByteBuf c = copyOf(1000);
        ByteBuf piece = c.retainedSlice(100, 400); // as the framer writes the part of a ULPDU between two markers
        ByteBuf rest = c.retainedDuplicate();
        assertEquals((byte) 100, piece.getByte(0));
        c.release(); // the transmitter let go: the pieces hold the copy
        assertEquals(1000, budget.committed(), "charged while any piece of the copy is queued");
        rest.release();
        assertEquals(1000, budget.committed());
        assertTrue(piece.release(), "the piece made the copy's last release");
        assertEquals(0, budget.committed(), "given back once, at the last release");
    }

    @Test
    void theWrapperIsReusedOnceReleased() {
        ByteBuf first = copyOf(600);
        first.release();
        ByteBuf second = copyOf(700);
        assertSame(first, second, "no wrapper per copy once one was released on the stream's thread");
        assertEquals(700, second.capacity());
        assertEquals(700, second.readableBytes());
        assertEquals(0, second.readerIndex());
        assertEquals((byte) 5, second.getByte(5));
        assertEquals(700, budget.committed(), "charged the new copy's size, the old one's given back");
        second.release();
        assertEquals(0, budget.committed());
    }

    @Test
    void aCopyReleasedOnAnotherThreadIsGivenBackNotKept() throws Exception {
        ByteBuf first = copyOf(600);
        Thread t = new Thread(first::release);
        t.start();
        t.join();
        assertEquals(0, budget.committed(), "the charge returns whatever thread makes the last release");
        ByteBuf second = copyOf(600);
        assertTrue(first != second, "only the stream's thread reuses a wrapper (the list has no lock)");
        second.release();
        assertEquals(0, budget.committed());
    }
}
