package dev.iwarp.verbs;

import java.util.Objects;

/** A receive work request (libibverbs ibv_recv_wr): one buffer for the next incoming Send. */
public final class RecvRequest {
    private final long wrId;
    private final Sge sge;

    private RecvRequest(long wrId, Sge sge) {
        this.wrId = wrId;
        this.sge = Objects.requireNonNull(sge, "sge");
    }

    public static RecvRequest of(long wrId, Sge sge) {
        return new RecvRequest(wrId, sge);
    }

    public long wrId() {
        return wrId;
    }

    public Sge sge() {
        return sge;
    }

    @Override
    public String toString() {
        return "RecvRequest{wrId=" + wrId + " " + sge + "}";
    }
}
