package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.SendRequest;

/**
 * An RDMA Read or atomic awaiting its response (an ORD slot); a Read RTR has no work request. The
 * {@link Requester} reuses a slot once its completion left, so the fields are set by
 * {@link #read} and {@link #atomic} rather than a constructor.
 */
final class Outstanding implements StartedRequest {
    SendRequest wr;
    int sinkStag;
    long sinkTo;
    int size;
    int atomicId;
    int received;
    private Completion outcome;

    /** This slot, now the given Read (atomic id 0 marks a Read). */
    Outstanding read(SendRequest wr, int sinkStag, long sinkTo, int size) {
        return set(wr, sinkStag, sinkTo, size, 0);
    }

    /** This slot, now the given atomic: its response is 8 octets, matched by {@code id}. */
    Outstanding atomic(SendRequest wr, int id) {
        return set(wr, 0, 0, 8, id);
    }

    /** This slot, done with: it forgets its request. */
    void clear() {
        set(null, 0, 0, 0, 0);
    }

    private Outstanding set(SendRequest wr, int sinkStag, long sinkTo, int size, int atomicId) {
        this.wr = wr;
        this.sinkStag = sinkStag;
        this.sinkTo = sinkTo;
        this.size = size;
        this.atomicId = atomicId;
        received = 0;
        outcome = null;
        return this;
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
