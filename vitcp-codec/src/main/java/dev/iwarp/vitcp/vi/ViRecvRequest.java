package dev.iwarp.vitcp.vi;

import java.util.List;

/** A receive-queue descriptor: where an incoming Send (or the immediate data of an RDMA Write) lands. */
public final class ViRecvRequest {
    final long wrId;
    final List<ViDataSegment> segments;
    final long length;

    private ViRecvRequest(long wrId, List<ViDataSegment> segments) {
        this.wrId = wrId;
        this.segments = List.copyOf(segments);
        long n = 0;
        for (ViDataSegment s : segments) {
            n += s.length();
        }
        this.length = n;
    }

    /** A receive descriptor scattering into {@code segments}, reported with {@code wrId}. */
    public static ViRecvRequest of(long wrId, ViDataSegment... segments) {
        return new ViRecvRequest(wrId, List.of(segments));
    }

    /** The caller's identifier, reported with the completion. */
    public long wrId() {
        return wrId;
    }
}
