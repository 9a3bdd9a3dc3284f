package dev.iwarp.verbs;

import java.util.Objects;

/**
 * A send-queue work request (libibverbs ibv_send_wr): Send (with Invalidate, with Solicited Event),
 * RDMA Write, RDMA Read, RFC 7306 Immediate Data and atomics. Immutable; the modifiers return copies.
 */
public final class SendRequest {

    /** The operation. */
    public enum Kind {
        SEND, SEND_WITH_INVALIDATE, RDMA_WRITE, RDMA_READ, IMMEDIATE_DATA, ATOMIC_FETCH_ADD, ATOMIC_SWAP,
        ATOMIC_COMPARE_SWAP
    }

    private final Kind kind;
    private final long wrId;
    private final Sge local;
    private final int remoteStag;
    private final long remoteTo;
    private final int invalidateStag;
    private final long data;
    private final long dataMask;
    private final long compare;
    private final long compareMask;
    private final boolean signaled;
    private final boolean solicited;
    private final boolean fenced;

    private SendRequest(Kind kind, long wrId, Sge local, int remoteStag, long remoteTo, int invalidateStag, long data,
                        long dataMask, long compare, long compareMask, boolean signaled, boolean solicited,
                        boolean fenced) {
        this.kind = kind;
        this.wrId = wrId;
        this.local = local;
        this.remoteStag = remoteStag;
        this.remoteTo = remoteTo;
        this.invalidateStag = invalidateStag;
        this.data = data;
        this.dataMask = dataMask;
        this.compare = compare;
        this.compareMask = compareMask;
        this.signaled = signaled;
        this.solicited = solicited;
        this.fenced = fenced;
    }

    private static SendRequest of(Kind kind, long wrId, Sge local, int stag, long to) {
        return new SendRequest(kind, wrId, local, stag, to, 0, 0, 0, 0, 0, true, false, false);
    }

    /** A Send of the SGE's octets into the peer's next posted receive buffer (RFC 5040 §5.3). */
    public static SendRequest send(long wrId, Sge local) {
        return of(Kind.SEND, wrId, Objects.requireNonNull(local), 0, 0);
    }

    /** A Send with Invalidate: the peer invalidates {@code stag} before delivering it. */
    public static SendRequest sendWithInvalidate(long wrId, Sge local, int stag) {
        return new SendRequest(Kind.SEND_WITH_INVALIDATE, wrId, Objects.requireNonNull(local), 0, 0, stag, 0, 0, 0, 0,
                true, false, false);
    }

    /** An RDMA Write of the SGE's octets to the peer's STag at TO (RFC 5040 §5.1). */
    public static SendRequest rdmaWrite(long wrId, Sge local, int remoteStag, long remoteTo) {
        return of(Kind.RDMA_WRITE, wrId, Objects.requireNonNull(local), remoteStag, remoteTo);
    }

    /** An RDMA Read of {@code local.length()} octets from the peer's STag at TO into the SGE (RFC 5040 §5.2). */
    public static SendRequest rdmaRead(long wrId, Sge local, int remoteStag, long remoteTo) {
        return of(Kind.RDMA_READ, wrId, Objects.requireNonNull(local), remoteStag, remoteTo);
    }

    /** RFC 7306 Immediate Data: 8 octets delivered in the peer's receive completion. */
    public static SendRequest immediateData(long wrId, long immediate) {
        return new SendRequest(Kind.IMMEDIATE_DATA, wrId, null, 0, 0, 0, immediate, 0, 0, 0, true, false, false);
    }

    /**
     * RFC 7306 Fetch-and-Add on the 8-octet big-endian value at the peer's STag/TO; the original
     * value is written to {@code result} (8 octets) and reported in the completion.
     */
    public static SendRequest fetchAdd(long wrId, Sge result, int remoteStag, long remoteTo, long add, long addMask) {
        return new SendRequest(Kind.ATOMIC_FETCH_ADD, wrId, checkAtomic(result), remoteStag, remoteTo, 0, add, addMask,
                0, 0, true, false, false);
    }

    /** RFC 7306 Swap with a mask. */
    public static SendRequest swap(long wrId, Sge result, int remoteStag, long remoteTo, long swap, long swapMask) {
        return new SendRequest(Kind.ATOMIC_SWAP, wrId, checkAtomic(result), remoteStag, remoteTo, 0, swap, swapMask,
                0, 0, true, false, false);
    }

    /** RFC 7306 Compare-and-Swap with masks. */
    public static SendRequest compareSwap(long wrId, Sge result, int remoteStag, long remoteTo, long compare,
                                          long compareMask, long swap, long swapMask) {
        return new SendRequest(Kind.ATOMIC_COMPARE_SWAP, wrId, checkAtomic(result), remoteStag, remoteTo, 0, swap,
                swapMask, compare, compareMask, true, false, false);
    }

    private static Sge checkAtomic(Sge result) {
        if (result.length() != 8) {
            throw new IllegalArgumentException("an atomic's result SGE is 8 octets: " + result.length());
        }
        return result;
    }

    private SendRequest with(boolean signaled, boolean solicited, boolean fenced) {
        return new SendRequest(kind, wrId, local, remoteStag, remoteTo, invalidateStag, data, dataMask, compare,
                compareMask, signaled, solicited, fenced);
    }

    /** Generate a completion when done (the default). */
    public SendRequest signaled() {
        return with(true, solicited, fenced);
    }

    /** No completion on success (errors still complete). */
    public SendRequest unsignaled() {
        return with(false, solicited, fenced);
    }

    /** Send variants and Immediate Data: ask the peer for a solicited event (SE opcodes). */
    public SendRequest solicited() {
        return with(signaled, true, fenced);
    }

    /** Hold this request until every earlier RDMA Read and atomic completed (read fence, RFC 5040 §5.5). */
    public SendRequest fenced() {
        return with(signaled, solicited, true);
    }

    public Kind kind() {
        return kind;
    }

    public long wrId() {
        return wrId;
    }

    /** The local SGE: source of Sends and Writes, sink of Reads, result of atomics; {@code null} for Immediate Data. */
    public Sge local() {
        return local;
    }

    public int remoteStag() {
        return remoteStag;
    }

    public long remoteTo() {
        return remoteTo;
    }

    public int invalidateStag() {
        return invalidateStag;
    }

    /** Immediate Data, or the add/swap operand. */
    public long data() {
        return data;
    }

    public long dataMask() {
        return dataMask;
    }

    public long compare() {
        return compare;
    }

    public long compareMask() {
        return compareMask;
    }

    public boolean isSignaled() {
        return signaled;
    }

    public boolean isSolicited() {
        return solicited;
    }

    public boolean isFenced() {
        return fenced;
    }

    /** Octets this request moves. */
    public int length() {
        return local == null ? 0 : local.length();
    }

    @Override
    public String toString() {
        return "SendRequest{" + kind + " wrId=" + wrId + (local != null ? " " + local : "")
                + (kind == Kind.RDMA_WRITE || kind == Kind.RDMA_READ || kind.name().startsWith("ATOMIC")
                ? String.format(" remote 0x%08x@0x%x", remoteStag, remoteTo) : "") + "}";
    }
}
