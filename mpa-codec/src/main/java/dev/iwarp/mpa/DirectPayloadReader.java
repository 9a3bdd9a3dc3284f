package dev.iwarp.mpa;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.UlpduSink;
import io.netty.buffer.ByteBuf;

import java.util.zip.CRC32C;

import static dev.iwarp.mpa.MpaFramer.CRC_LENGTH;
import static dev.iwarp.mpa.MpaFramer.LENGTH_FIELD;

/**
 * The direct-read half of {@link FpduReader}, as siw's receive path: once an FPDU's DDP header is in, the sink
 * names the payload's destination, the payload octets go there (read from the socket straight into it through
 * the channel's {@link DirectReadAllocator}, else copied from the buffers received), CRC32C is computed over
 * what was read, and pad and CRC follow. RFC 5044 §8 allows a receiver to place before the CRC is checked,
 * provided an error is still reported: the destination is one the sink checked before a single octet went
 * there, and only a matching CRC completes the placement. The cumulating half ({@link FpduReader}) keeps the
 * FPDU's framing state (lengths, stream position, errors); this class keeps the destination.
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
final class DirectPayloadReader {
    private final FpduReader fpdu;
    private final boolean crc;
    private final CRC32C rxCrc;
    private final Crc32cFeed rxFeed;

    /** Where ULPDUs go; null until one is bound. */
    private UlpduSink sink;
    /**
     * The channel's allocator when whoever built the pipeline said the socket's octets reach the framer
     * unchanged ({@link MpaFramer#readDirectlyWith}), else null: payloads are then copied from the buffers received.
     */
    private DirectReadAllocator direct;
    /** The sink was asked for this FPDU's destination already (and wants the whole ULPDU). */
    private boolean asked;
    /** The payload's destination (while reading a payload or its trailer): ours to release. */
    private ByteBuf destination;
    /** Octets of {@link #destination} the CRC covers so far. */
    private int destinationChecked;
    /** The fewest octets a ULPDU header the sink answers can have (DDP: 14, a tagged one). */
    private int shortestHeader = 1;
    /**
     * FPDUs still to be read header first after the last large one ({@link #fpduDone}): each costs one more socket
     * read when the FPDU turns out small.
     */
    private int headerFirst;

    DirectPayloadReader(FpduReader fpdu, boolean crc, CRC32C rxCrc, Crc32cFeed rxFeed) {
        this.fpdu = fpdu;
        this.crc = crc;
        this.rxCrc = rxCrc;
        this.rxFeed = rxFeed;
    }

    /** From now on payloads may be read into the destinations {@code s} names. */
    void receiveWith(UlpduSink s) {
        sink = s;
        int shortest = Integer.MAX_VALUE;
        for (int firstOctet = 0; firstOctet < 256; firstOctet++) {
            int hl = s.headerLength(firstOctet);
            if (hl > 0) {
                shortest = Math.min(shortest, hl);
            }
        }
        shortestHeader = shortest == Integer.MAX_VALUE ? 1 : shortest;
    }

    /** Socket reads go into destinations through {@code d} (null: never). */
    void readDirectlyWith(DirectReadAllocator d) {
        if (destination != null && direct != null) {
            direct.readInto(null);
        }
        direct = d;
        if (destination != null && d != null) {
            d.readInto(destination);
        }
    }

    /** A new FPDU's header was read: the sink has not been asked about it yet. */
    void newFpdu() {
        asked = false;
    }

    /** Whether the sink was asked for the current FPDU's destination already. */
    boolean asked() {
        return asked;
    }

    /** Whether {@code msg} is the destination a socket read was just made into. */
    boolean isDestination(Object msg) {
        return msg == destination && msg != null;
    }

    /**
     * When at least {@link MpaFramer#DIRECT_READ_MIN} payload octets of the FPDU at {@code in}'s reader index
     * (ULPDU_Length {@code ulpduLength}) are still due, asks the sink where the payload goes, and on an answer
     * copies the payload octets already here there and has the rest read into it. Whether it went so (the
     * caller then reads the payload through {@link #copyIn} and {@link #payloadRead}).
     */
    boolean begin(ByteBuf in, int ulpduLength) {
        int start = in.readerIndex();
        int here = in.readableBytes() - LENGTH_FIELD;
        if (here < 1) {
            return false;
        }
        int hl = sink.headerLength(in.getUnsignedByte(start + LENGTH_FIELD));
        int payloadLength = ulpduLength - hl;
        if (hl <= 0 || here < hl || payloadLength - (here - hl) < MpaFramer.DIRECT_READ_MIN) {
            return false;
        }
        asked = true;
        int end = in.writerIndex();
        ByteBuf d;
        in.setIndex(start + LENGTH_FIELD, end);
        try {
            d = sink.payloadDestination(in, hl, payloadLength);
        } finally {
            in.setIndex(start, end);
        }
        if (d == null) {
            return false;
        }
        if (crc) {
            rxCrc.reset();
            rxFeed.update(rxCrc, in, start, in.readableBytes());
        }
        d.writeBytes(in, start + LENGTH_FIELD + hl, here - hl);
        in.skipBytes(in.readableBytes());
        destination = d;
        destinationChecked = d.writerIndex();
        d.readerIndex(destinationChecked);
        if (direct != null) {
            direct.limitNextRead(0);
            direct.readInto(d);
        }
        return true;
    }

    /**
     * Sizes the next socket read for the FPDU at {@code in}'s reader index (ULPDU_Length {@code ulpduLength},
     * {@code wireLength} octets on the wire), not yet read directly: while its header is incomplete and its
     * payload large, the read ends at the end of its header (then {@link #begin} can name the destination);
     * else, for a large FPDU, it ends at the following FPDU's header, so that a large payload behind it is
     * read directly (likewise for a small FPDU while a large one was recent, {@link #fpduDone}).
     */
    void sizeNextRead(ByteBuf in, int ulpduLength, int wireLength) {
        if (direct == null) {
            return;
        }
        int readable = in.readableBytes();
        int hl = readable > LENGTH_FIELD ? sink.headerLength(in.getUnsignedByte(in.readerIndex() + LENGTH_FIELD)) : 0;
        int headerEnd = LENGTH_FIELD + Math.max(hl, shortestHeader);
        if (!asked && readable < headerEnd && ulpduLength + LENGTH_FIELD - headerEnd >= MpaFramer.DIRECT_READ_MIN) {
            direct.limitNextRead(headerEnd - readable);
        } else if (ulpduLength >= MpaFramer.DIRECT_READ_MIN || headerFirst > 0) {
            // a small FPDU right after a large one (its message's last) is read to the next header as well
            direct.limitNextRead(wireLength - readable + LENGTH_FIELD + shortestHeader);
        }
    }

    /**
     * An FPDU of ULPDU_Length {@code ulpduLength} was received and {@code in} holds what follows it. A stream that
     * carries large FPDUs likely carries more: for the next {@value #HEADER_FIRST_AFTER_LARGE} FPDUs after a large
     * one, when nothing of the next is here yet, the next read takes only the ULPDU_Length field and the shortest
     * header, so that a large payload is read directly whenever the peer sends it (a message's last, short FPDU
     * or a small control message in between does not end this).
     */
    void fpduDone(ByteBuf in, int ulpduLength) {
        if (ulpduLength >= MpaFramer.DIRECT_READ_MIN) {
            headerFirst = HEADER_FIRST_AFTER_LARGE;
        } else if (headerFirst > 0) {
            headerFirst--;
        }
        headerDue(in);
    }

    /**
     * Small FPDUs read header first after a large one, at most. Counting: a header-first read costs one more
     * socket read (1-2 µs) when the FPDU turns out small; the large FPDU before it saved the copy of at least
     * {@link MpaFramer#DIRECT_READ_MIN} octets (about 1 µs per 4 KiB), which pays for two such reads.
     */
    static final int HEADER_FIRST_AFTER_LARGE = 2;

    /** Fewer than the ULPDU_Length field's octets of the next FPDU are here: after a large FPDU, read its header alone. */
    void headerDue(ByteBuf in) {
        if (headerFirst > 0 && direct != null && in.readableBytes() < LENGTH_FIELD) {
            direct.limitNextRead(LENGTH_FIELD + shortestHeader - in.readableBytes());
        }
    }

    /**
     * Payload octets that came in an ordinary buffer (a read begun before the destination was known) go to
     * the destination; whether there were any (then {@link #payloadRead} follows).
     */
    boolean copyIn(ByteBuf in) {
        int n = Math.min(in.readableBytes(), destination.writableBytes());
        if (n == 0) {
            return false;
        }
        destination.writeBytes(in, n);
        return true;
    }

    /**
     * New octets in the destination: under the CRC. Whether the payload is complete (then the trailer of
     * {@code trailerAndNextLength} octets up to the next FPDU's ULPDU_Length field is read as usual).
     */
    boolean payloadRead(int trailerAndLengthField) {
        ByteBuf d = destination;
        int w = d.writerIndex();
        if (crc && w > destinationChecked) {
            rxFeed.update(rxCrc, d, destinationChecked, w - destinationChecked);
        }
        destinationChecked = w;
        // a handler below the framer that watches the reads (a capture) sees each read's octets alone
        d.readerIndex(w);
        if (d.isWritable()) {
            return false;
        }
        if (direct != null) {
            direct.readInto(null);
            // pad, CRC and the next FPDU's header only: a large payload behind it is read directly too
            direct.limitNextRead(trailerAndLengthField + shortestHeader);
        }
        return true;
    }

    /**
     * Pad and CRC ({@code trailer} octets) of an FPDU whose payload was read into its destination: whether
     * they are in; on a match the destination is released and the sink told (RFC 5044 §8 code 2 otherwise).
     */
    boolean readTrailer(io.netty.channel.ChannelHandlerContext ctx, ByteBuf in, int trailer) {
        if (in.readableBytes() < trailer) {
            if (direct != null) { // the socket held part of it: the next read still ends at the next header
                direct.limitNextRead(trailer - in.readableBytes() + LENGTH_FIELD + shortestHeader);
            }
            return false;
        }
        int start = in.readerIndex();
        if (crc) {
            rxFeed.update(rxCrc, in, start, trailer - CRC_LENGTH);
            int computed = (int) rxCrc.getValue();
            int received = in.getIntLE(start + trailer - CRC_LENGTH);
            if (computed != received) {
                abandon();
                // RFC 5044 §8 code 2: the payload was placed, inside the range DDP checked; the error ends the stream
                throw fpdu.crcError(ctx, in, received, computed);
            }
        }
        in.skipBytes(trailer);
        abandon();
        return true;
    }

    /** The destination holds the payload and the CRC matched. */
    void placed() {
        sink.placed();
    }

    /** Stops reading into a destination (closing, removed, failed) and releases it; whether there was one. */
    boolean abandon() {
        ByteBuf d = destination;
        if (d == null) {
            return false;
        }
        destination = null;
        if (direct != null) {
            direct.readInto(null);
        }
        d.release();
        return true;
    }
}
