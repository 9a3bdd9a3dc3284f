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

    @Test
    void aDepthThatIsNoPowerOfTwoStillBoundsTheRingAndWrapsInOrder() {
        assertEquals(List.of(1, 1, 2, 4, 4, 8, 16, 16, 32),
                List.of(0, 1, 2, 3, 4, 5, 9, 16, 17).stream().map(SignaledIterations::ringLength).toList());
        SignaledIterations s = new SignaledIterations(3); // a ring of 4: the bound is still 3
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 100; round++) {
            s.add(next++);
            s.add(next++);
            s.add(next++);
            long refused = next;
            assertThrows(IllegalStateException.class, () -> s.add(refused));
            assertEquals(expected++, s.poll());
            assertEquals(expected++, s.poll());
            assertEquals(expected++, s.poll());
            assertEquals(-1, s.poll());
        }
    }
}
