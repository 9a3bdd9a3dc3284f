package dev.iwarp.ddp;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class FreeListTest {
    @Test
    void keepsAtMostItsBoundAndGivesTheLastKeptFirst() {
        FreeList<Object> list = new FreeList<>(2);
        assertNull(list.poll(), "nothing kept yet");
        Object a = new Object();
        Object b = new Object();
        list.offer(a);
        list.offer(b);
        list.offer(new Object()); // over the bound: dropped
        assertSame(b, list.poll());
        assertSame(a, list.poll());
        assertNull(list.poll());
    }

    @Test
    void growsPastItsFirstArrayUpToItsBound() {
        FreeList<Integer> list = new FreeList<>(20);
        for (int i = 0; i < 25; i++) {
            list.offer(i);
        }
        for (int i = 19; i >= 0; i--) {
            assertSame(i, list.poll(), "kept in the order given back, newest first");
        }
        assertNull(list.poll(), "the five over the bound were dropped");
    }
}
