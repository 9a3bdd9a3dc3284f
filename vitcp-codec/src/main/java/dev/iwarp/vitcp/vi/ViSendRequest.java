package dev.iwarp.vitcp.vi;

import java.util.List;

/**
 * A send-queue descriptor: Send, RDMA Write (optionally with immediate data) or RDMA Read. The remote side of an
 * RDMA is a virtual address qualified by the peer's memory handle (draft §3.4), not an STag and offset.
 */
public final class ViSendRequest {
    final long wrId;
    final ViOpcode opcode;
    final List<ViDataSegment> segments;
    final long remoteAddress;
    final int remoteHandle;
    final boolean immediateDataValid;
    final int immediateData;

    private ViSendRequest(long wrId, ViOpcode opcode, List<ViDataSegment> segments, long remoteAddress, int remoteHandle,
                        boolean immediateDataValid, int immediateData) {
        this.wrId = wrId;
        this.opcode = opcode;
        this.segments = List.copyOf(segments);
        this.remoteAddress = remoteAddress;
        this.remoteHandle = remoteHandle;
        this.immediateDataValid = immediateDataValid;
        this.immediateData = immediateData;
    }

    /** A Send of {@code segments}, gathered in order. */
    public static ViSendRequest send(long wrId, ViDataSegment... segments) {
        return new ViSendRequest(wrId, ViOpcode.SEND, List.of(segments), 0, 0, false, 0);
    }

    /** An RDMA Write of {@code segments} to the peer's memory at ({@code remoteAddress}, {@code remoteHandle}). */
    public static ViSendRequest rdmaWrite(long wrId, long remoteAddress, int remoteHandle, ViDataSegment... segments) {
        return new ViSendRequest(wrId, ViOpcode.RDMA_WRITE, List.of(segments), remoteAddress, remoteHandle, false, 0);
    }

    /** An RDMA Read of the peer's memory at ({@code remoteAddress}, {@code remoteHandle}) into {@code segments}. */
    public static ViSendRequest rdmaRead(long wrId, long remoteAddress, int remoteHandle, ViDataSegment... segments) {
        return new ViSendRequest(wrId, ViOpcode.RDMA_READ, List.of(segments), remoteAddress, remoteHandle, false, 0);
    }

    /** Immediate data (Send or RDMA Write); an RDMA Write with immediate data consumes a receive descriptor. */
    public ViSendRequest withImmediate(int value) {
        if (opcode == ViOpcode.RDMA_READ) {
            throw new IllegalArgumentException("RDMA Read carries no immediate data");
        }
        return new ViSendRequest(wrId, opcode, segments, remoteAddress, remoteHandle, true, value);
    }

    /** The caller's identifier, reported with the completion. */
    public long wrId() {
        return wrId;
    }

    /** What the descriptor does: Send, RDMA Write or RDMA Read. */
    public ViOpcode opcode() {
        return opcode;
    }

    long length() {
        long n = 0;
        for (ViDataSegment s : segments) {
            n += s.length();
        }
        return n;
    }

    /** Whether this message consumes one of the peer's receive descriptors (draft §3.3 flow control). */
    boolean consumesReceiveDescriptor() {
        return opcode == ViOpcode.SEND || (opcode == ViOpcode.RDMA_WRITE && immediateDataValid);
    }
}
