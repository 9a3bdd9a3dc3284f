package dev.iwarp.rdmap.engine;

import org.junit.jupiter.api.Test;


/**
 * Over a lower layer whose {@code writeUlpdu} copies small payloads (as MPA's writer builds a small FPDU
 * whole) every operation still completes with the right octets: a message it copied completes once written.
 */
class SegmentsCutBelowTest extends EnginePairTest {
    @Test
    void everyOperationCrossesALowerLayerThatCopiesSmallPayloads() {
        pair = EnginePair.copyingBelow();
        writeReadAndSendOfFourSegmentsEach();
    }
}
