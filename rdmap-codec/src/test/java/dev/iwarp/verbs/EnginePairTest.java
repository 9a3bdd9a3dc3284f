package dev.iwarp.verbs;

import org.junit.jupiter.api.AfterEach;

/** The fixture of the tests that run two engines back to back: the pair, closed after each test, and regions. */
abstract class EnginePairTest {
    final Regions regions = new Regions();
    EnginePair pair;

    @AfterEach
    void closePair() {
        if (pair != null) {
            pair.close();
        }
    }
}
