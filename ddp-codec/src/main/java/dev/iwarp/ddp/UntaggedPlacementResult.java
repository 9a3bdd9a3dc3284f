package dev.iwarp.ddp;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * What {@link UntaggedReceiveQueue#place} did with one segment: {@link Kind#PLACED} (more segments of
 * the message to come), {@link Kind#DELIVERED} (the L=1 segment completed the message, RFC 5041 §5.4:
 * context, QN, MSN, message length and RsvdULP for the ULP) or {@link Kind#ERROR} (nothing placed).
 * PLACED and ERROR results are shared constants. A DELIVERED result is its queue's own object, filled
 * again by the queue's next delivery: take what it says before the next {@code place} on that queue
 * (no allocation per message received).
 *
 * @param <T> the context posted with the buffer
 */
public final class UntaggedPlacementResult<T> {
    /** Outcome kinds. */
    public enum Kind { PLACED, DELIVERED, ERROR }

    private static final UntaggedPlacementResult<?> PLACED = new UntaggedPlacementResult<>(Kind.PLACED, null);
    private static final Map<DdpError, UntaggedPlacementResult<?>> ERRORS = new EnumMap<>(DdpError.class);

    static {
        for (DdpError e : DdpError.values()) {
            ERRORS.put(e, new UntaggedPlacementResult<>(Kind.ERROR, e));
        }
    }

    private final Kind kind;
    private final DdpError error;
    private T context;
    private int qn;
    private int msn;
    private int messageLength;
    private int rsvdUlp;
    private int rsvdUlp2;

    /** A result of {@code kind}; a delivery's fields are filled by {@link #deliver}. */
    private UntaggedPlacementResult(Kind kind, DdpError error) {
        this.kind = kind;
        this.error = error;
    }

    @SuppressWarnings("unchecked")
    static <T> UntaggedPlacementResult<T> placed() {
        return (UntaggedPlacementResult<T>) PLACED;
    }

    @SuppressWarnings("unchecked")
    static <T> UntaggedPlacementResult<T> error(DdpError error) {
        return (UntaggedPlacementResult<T>) ERRORS.get(Objects.requireNonNull(error));
    }

    /** A queue's delivery result, to be filled by {@link #deliver} for each message it delivers. */
    static <T> UntaggedPlacementResult<T> forDeliveries() {
        return new UntaggedPlacementResult<>(Kind.DELIVERED, null);
    }

    /** This delivery result, now saying the given message was delivered. */
    UntaggedPlacementResult<T> deliver(T context, int qn, int msn, int messageLength, int rsvdUlp, int rsvdUlp2) {
        this.context = context;
        this.qn = qn;
        this.msn = msn;
        this.messageLength = messageLength;
        this.rsvdUlp = rsvdUlp;
        this.rsvdUlp2 = rsvdUlp2;
        return this;
    }

    /** What happened. */
    public Kind kind() {
        return kind;
    }

    /** Whether the segment failed (nothing placed). */
    public boolean isError() {
        return kind == Kind.ERROR;
    }

    /** Whether the segment completed a message. */
    public boolean isDelivered() {
        return kind == Kind.DELIVERED;
    }

    /** The Untagged Buffer Error (RFC 5041 §7.2) for {@link Kind#ERROR}, else {@code null}. */
    public DdpError error() {
        return error;
    }

    /** The context posted with the buffer that holds the delivered message, else {@code null}. */
    public T context() {
        return context;
    }

    /** QN of the delivered message. */
    public int qn() {
        return qn;
    }

    /** MSN of the delivered message. */
    public int msn() {
        return msn;
    }

    /** Length of the delivered message: MO + payload of its L=1 segment (RFC 5041 §5.4). */
    public int messageLength() {
        return messageLength;
    }

    /** RsvdULP[0:7] of the delivered message (RDMAP's control octet). */
    public int rsvdUlp() {
        return rsvdUlp;
    }

    /** RsvdULP[8:39] of the delivered message (RDMAP's Invalidate STag, or 0). */
    public int rsvdUlp2() {
        return rsvdUlp2;
    }

    @Override
    public String toString() {
        switch (kind) {
            case ERROR:
                return "ERROR " + error;
            case DELIVERED:
                return String.format("DELIVERED{QN %d MSN %d length %d RsvdULP 0x%02x/0x%08x %s}",
                        Integer.toUnsignedLong(qn), Integer.toUnsignedLong(msn), messageLength, rsvdUlp, rsvdUlp2,
                        context);
            default:
                return "PLACED";
        }
    }
}
