package dev.iwarp.verbs;

/** An RDMA Read or atomic awaiting its response (an ORD slot); a Read RTR has no work request. */
final class Outstanding implements Started {
    final SendRequest wr;
    final int sinkStag;
    final long sinkTo;
    final int size;
    final int atomicId;
    int received;
    private Completion outcome;

    private Outstanding(SendRequest wr, int sinkStag, long sinkTo, int size, int atomicId) {
        this.wr = wr;
        this.sinkStag = sinkStag;
        this.sinkTo = sinkTo;
        this.size = size;
        this.atomicId = atomicId;
    }

    static Outstanding read(SendRequest wr, int sinkStag, long sinkTo, int size) {
        return new Outstanding(wr, sinkStag, sinkTo, size, 0);
    }

    static Outstanding atomic(SendRequest wr, int id) {
        return new Outstanding(wr, 0, 0, 8, id);
    }

    @Override
    public SendRequest wr() {
        return wr;
    }

    @Override
    public Completion outcome() {
        return outcome;
    }

    @Override
    public void outcome(Completion c) {
        outcome = c;
    }
}
