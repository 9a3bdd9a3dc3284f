package dev.iwarp.framing;

/**
 * When a framer that lends its ULPDUs to a {@link UlpduSink} asks for another socket read with auto-read off.
 * Netty's {@code ByteToMessageDecoder} asks for one after every read batch that passed nothing up the pipeline,
 * so that one read the ULP asked for yields a message; but a ULPDU lent to the sink is never passed up, and a
 * ULP that stopped reading (auto-read off, as TCP flow control towards a peer it cannot keep up with) would go on
 * taking every unit. The rule here is the decoder's, counted in framing units: another read only after a batch
 * that read octets and completed no unit, wherever the unit's ULPDU went (up, or to the sink), and whether the
 * octets came through the decoder or straight into a payload's destination. Event loop only.
 */
public final class ReadBatch {
    private long unitsAtBatchEnd;
    private boolean octetsRead;

    /** A socket read reached the framer (through its decoder or into a destination). */
    public void read() {
        octetsRead = true;
    }

    /**
     * Ends the read batch: whether, with auto-read off, the framer asks for another read now.
     *
     * @param unitsCompleted the framing units (FPDUs, frames) the framer completed so far, a running count
     */
    public boolean end(long unitsCompleted) {
        boolean completedOne = unitsCompleted != unitsAtBatchEnd;
        boolean readMore = octetsRead && !completedOne;
        unitsAtBatchEnd = unitsCompleted;
        octetsRead = false;
        return readMore;
    }
}
