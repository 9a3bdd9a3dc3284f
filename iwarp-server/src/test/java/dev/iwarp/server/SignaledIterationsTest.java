package dev.iwarp.server;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SignaledIterationsTest {
    @Test
    void everyNthAndTheLastOfEachBurstGoSignaled() {
        List<Long> signaled = new ArrayList<>();
        long next = 0;
        for (int burst : new int[] {16, 3, 5, 1}) { // iterations 0..15, 16..18, 19..23, 24
            long first = next;
            for (int k = 0; k < burst; k++, next++) {
                if (SignaledIterations.signaled(next, first, burst, 8)) {
                    signaled.add(next);
                }
            }
        }
        assertEquals(List.of(7L, 15L, 18L, 23L, 24L), signaled);
    }

    @Test
    void everyOneGoesSignaledAtOne() {
        for (long it = 0; it < 10; it++) {
            assertEquals(true, SignaledIterations.signaled(it, 0, 10, 1));
        }
    }

    @Test
    void completionsComeBackInPostingOrderAndTheRingIsBounded() {
        SignaledIterations s = new SignaledIterations(2);
        assertEquals(-1, s.poll());
        s.add(3);
        s.add(7);
        assertThrows(IllegalStateException.class, () -> s.add(9));
        assertEquals(3, s.poll());
        s.add(9);
        assertEquals(7, s.poll());
        assertEquals(9, s.poll());
        assertEquals(-1, s.poll());
    }
}
