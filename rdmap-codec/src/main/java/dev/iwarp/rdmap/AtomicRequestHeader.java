package dev.iwarp.rdmap;

import io.netty.buffer.ByteBuf;

/**
 * The Atomic Request header (RFC 7306), the whole payload of an Atomic Request
 * (untagged, QN 1):
 * <pre>
 *  | Reserved (28) | AtomOp (4) | Request Identifier (32) | Remote STag (32) | Remote TO (64)
 *  | Add or Swap Data (64) | Add or Swap Mask (64) | Compare Data (64) | Compare Mask (64)
 * </pre>
 * The AtomOp is kept as received, reserved values included ({@link #operation()} is then
 * {@code null}): judging it is the engine's job (RFC 7306). The 28 reserved bits are sent 0
 * and ignored.
 *
 * @param atomOp        AtomOp, 0..15 (see {@link AtomicOp#value()})
 * @param requestId     Request Identifier, echoed in the Atomic Response
 * @param remoteStag    STag of the responder's buffer
 * @param remoteTo      Tagged Offset of the 64-bit target (8-aligned)
 * @param addOrSwapData Add Data (FetchAdd) or Swap Data (Swap, CmpSwap)
 * @param addOrSwapMask Add Mask or Swap Mask
 * @param compareData   Compare Data (CmpSwap; sent as zero otherwise)
 * @param compareMask   Compare Mask (CmpSwap; sent as zero otherwise)
 */
public record AtomicRequestHeader(int atomOp, int requestId, int remoteStag, long remoteTo, long addOrSwapData,
                                  long addOrSwapMask, long compareData, long compareMask) {
    /** Octets on the wire. */
    public static final int LENGTH = 52;

    /** Checks that AtomOp fits its 4 bits. */
    public AtomicRequestHeader {
        if ((atomOp & ~0xF) != 0) {
            throw new IllegalArgumentException("AtomOp is 4 bits: " + atomOp);
        }
    }

    /** A FetchAdd request; each 1 bit of {@code addMask} ends a field (see {@link Atomics#fetchAdd}). */
    public static AtomicRequestHeader fetchAdd(int requestId, int remoteStag, long remoteTo, long addData,
                                               long addMask) {
        return new AtomicRequestHeader(AtomicOp.FETCH_ADD.value(), requestId, remoteStag, remoteTo, addData, addMask,
                0, 0);
    }

    /** A Swap request. */
    public static AtomicRequestHeader swap(int requestId, int remoteStag, long remoteTo, long swapData,
                                           long swapMask) {
        return new AtomicRequestHeader(AtomicOp.SWAP.value(), requestId, remoteStag, remoteTo, swapData, swapMask,
                0, 0);
    }

    /** A CmpSwap request. */
    public static AtomicRequestHeader compareSwap(int requestId, int remoteStag, long remoteTo, long compareData,
                                                  long compareMask, long swapData, long swapMask) {
        return new AtomicRequestHeader(AtomicOp.COMPARE_SWAP.value(), requestId, remoteStag, remoteTo, swapData,
                swapMask, compareData, compareMask);
    }

    /** The operation, or {@code null} for a reserved AtomOp. */
    public AtomicOp operation() {
        return AtomicOp.fromValue(atomOp);
    }

    /** Reads the header at {@code index}, leaving the indices of {@code in} alone. */
    public static AtomicRequestHeader decode(ByteBuf in, int index) {
        return new AtomicRequestHeader(in.getInt(index) & 0xF, in.getInt(index + 4), in.getInt(index + 8),
                in.getLong(index + 12), in.getLong(index + 20), in.getLong(index + 28), in.getLong(index + 36),
                in.getLong(index + 44));
    }

    /** Writes the 52 octets at the writer index of {@code out}. */
    public void encode(ByteBuf out) {
        out.writeInt(atomOp);
        out.writeInt(requestId);
        out.writeInt(remoteStag);
        out.writeLong(remoteTo);
        out.writeLong(addOrSwapData);
        out.writeLong(addOrSwapMask);
        out.writeLong(compareData);
        out.writeLong(compareMask);
    }

    /**
     * The value the responder writes for this request given the target's original value (the
     * original itself when a CmpSwap does not match).
     *
     * @throws IllegalStateException for a reserved AtomOp
     */
    public long apply(long original) {
        AtomicOp op = operation();
        if (op == null) {
            throw new IllegalStateException("reserved AtomOp " + atomOp);
        }
        switch (op) {
            case FETCH_ADD:
                return Atomics.fetchAdd(original, addOrSwapData, addOrSwapMask);
            case SWAP:
                return Atomics.swap(original, addOrSwapData, addOrSwapMask);
            default:
                return Atomics.compareSwap(original, compareData, compareMask, addOrSwapData, addOrSwapMask);
        }
    }

    @Override
    public String toString() {
        AtomicOp op = operation();
        return String.format("%s request id %d STag 0x%08x TO 0x%016x data 0x%016x mask 0x%016x"
                        + " compare 0x%016x compare mask 0x%016x", op == null ? "reserved AtomOp " + atomOp : op,
                Integer.toUnsignedLong(requestId), remoteStag, remoteTo, addOrSwapData, addOrSwapMask, compareData,
                compareMask);
    }
}
