package dev.iwarp.ddp.llp;

import io.netty.buffer.ByteBuf;

/**
 * Where a ULPDU's payload goes, as a {@link UlpduReceiver} answers a header: one instance per
 * receiver, filled again for each ULPDU (no object per segment). Confined to the event loop.
 */
public final class Placement {
    /** What the framing does with the payload octets. */
    public enum Kind {
        /** Copy them into {@link #target()} at {@link #offset()} (RFC 5041 §5.1 placement). */
        PLACE,
        /** Hand the whole ULPDU to {@link UlpduReceiver#onPayload}. */
        DELIVER,
        /** Drop them: the stream no longer processes what arrives (RFC 5040 §6.2.2, after a Terminate). */
        DISCARD
    }

    /**
     * Memory a payload may be placed into: a registered region, or a posted receive buffer within one.
     * The receiver checked the range before answering.
     */
    public interface Target {
        /** Copies {@code len} octets of {@code src} from {@code srcIndex} to {@code offset}; indices unchanged. */
        void placeAt(int offset, ByteBuf src, int srcIndex, int len);
    }

    private Kind kind = Kind.DISCARD;
    private Target target;
    private int offset;

    /** The payload goes into {@code target} at {@code offset}. */
    public Placement place(Target target, int offset) {
        this.kind = Kind.PLACE;
        this.target = target;
        this.offset = offset;
        return this;
    }

    /** The ULPDU goes to {@link UlpduReceiver#onPayload}. */
    public Placement deliver() {
        return set(Kind.DELIVER);
    }

    /** The payload is dropped. */
    public Placement discard() {
        return set(Kind.DISCARD);
    }

    private Placement set(Kind k) {
        kind = k;
        target = null;
        offset = 0;
        return this;
    }

    public Kind kind() {
        return kind;
    }

    public Target target() {
        return target;
    }

    public int offset() {
        return offset;
    }
}
