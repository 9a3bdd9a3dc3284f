package dev.iwarp.rdmap.engine;

import dev.iwarp.rdmap.ReadRequestHeader;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

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
    /**
     * The octets of this slot's Read Request (RFC 5040 §4.4), written again for each Read the slot serves: a slot
     * is reused only once its Read's response arrived, by when the lower layer has copied (a small ULPDU) or sent
     * the request and let go of them; if it still holds them, the slot takes a new buffer. A heap buffer of our
     * own, never from the channel's allocator: on the requester, taking and releasing one pooled buffer per Read
     * Request was 18 % of the event loop's samples at 1 KiB Reads.
     */
    private ByteBuf requestOctets;

    /** This slot, now the given Read (atomic id 0 marks a Read). */
    Outstanding read(SendRequest wr, int sinkStag, long sinkTo, int size) {
        return set(wr, sinkStag, sinkTo, size, 0);
    }

    /** This slot, now the given atomic: its response is 8 octets, matched by {@code id}. */
    Outstanding atomic(SendRequest wr, int id) {
        return set(wr, 0, 0, 8, id);
    }

    /** An empty buffer for this slot's Read Request, whose reference the caller takes (the message releases it). */
    ByteBuf requestOctets() {
        ByteBuf b = requestOctets;
        if (b == null || b.refCnt() != 1) {
            b = requestOctets = Unpooled.wrappedBuffer(new byte[ReadRequestHeader.LENGTH]);
        }
        return b.retain().clear();
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
