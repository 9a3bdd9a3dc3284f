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

        /**
         * A writable view of the destination octets {@code [offset, offset + length)}: reader and writer
         * index 0, capacity {@code length}, over the target's own memory, so that a framing can read the
         * socket straight into it (the kernel's copy is then the only one, as siw places from the socket
         * buffer). The caller owns the view and releases it; releasing it never releases the target. Null
         * when the target has no such memory (e.g. heap memory, whose socket read the JDK copies through
         * a direct buffer of its own, or memory not yet allocated): the framing then uses
         * {@link #placeAt}. The receiver checked the range before answering.
         */
        default ByteBuf view(int offset, int length) {
            return null;
        }
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
