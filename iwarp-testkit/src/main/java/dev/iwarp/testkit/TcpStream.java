package dev.iwarp.testkit;

import java.util.List;

/**
 * One direction of a {@link TcpConnection}: the payload bytes in sequence-number order, as the
 * receiving application read them, and which frame carried which bytes.
 *
 * <p>Built by {@link TcpStreams}. Offset 0 is the first octet after the SYN (or, when the capture
 * missed the SYN, the first sequence number seen in this direction).
 */
public final class TcpStream {

    /**
     * A run of stream bytes that first arrived in one frame.
     *
     * @param frame  tshark frame number of the segment that delivered these bytes
     * @param offset stream offset of the first byte
     * @param length number of bytes (at least 1)
     */
    public record Chunk(int frame, long offset, int length) {
        /** Offset just past the last byte. */
        public long end() {
            return offset + length;
        }
    }

    private final byte[] bytes;
    private final List<Chunk> chunks;
    private final List<TcpSegment> segments;
    private final boolean complete;

    TcpStream(byte[] bytes, List<Chunk> chunks, List<TcpSegment> segments, boolean complete) {
        this.bytes = bytes;
        this.chunks = List.copyOf(chunks);
        this.segments = List.copyOf(segments);
        this.complete = complete;
    }

    /**
     * The reassembled payload, from offset 0 up to the first hole (if any). Retransmitted or overlapping
     * bytes appear once; where copies differ, the first one captured wins. Returns the internal array:
     * do not modify it.
     */
    public byte[] bytes() {
        return bytes;
    }

    /** Number of reassembled bytes. */
    public int length() {
        return bytes.length;
    }

    /**
     * Where the bytes came from, in offset order: contiguous, non-overlapping and covering
     * {@link #bytes()} exactly. A retransmission adds a chunk only for bytes not seen before.
     */
    public List<Chunk> chunks() {
        return chunks;
    }

    /** Every segment sent in this direction (with or without payload), in capture order. */
    public List<TcpSegment> segments() {
        return segments;
    }

    /** False if payload beyond a hole in the sequence space was captured but could not be appended. */
    public boolean complete() {
        return complete;
    }

    /**
     * The frame that delivered the byte at {@code offset}.
     *
     * @throws IndexOutOfBoundsException if offset is not within {@link #bytes()}
     */
    public int frameAt(long offset) {
        if (offset < 0 || offset >= bytes.length) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside stream of " + bytes.length);
        }
        int lo = 0;
        int hi = chunks.size() - 1;
        while (lo < hi) { // last chunk with chunk.offset <= offset
            int mid = (lo + hi + 1) >>> 1;
            if (chunks.get(mid).offset() <= offset) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return chunks.get(lo).frame();
    }

    @Override
    public String toString() {
        return "TcpStream[" + bytes.length + " bytes in " + chunks.size() + " chunks"
                + (complete ? "" : ", incomplete") + "]";
    }
}
