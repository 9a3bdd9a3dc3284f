package dev.iwarp.ift;

import dev.iwarp.framing.Crc32c;
import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.UlpduSink;
import io.netty.buffer.ByteBuf;

import java.util.zip.CRC32C;

import static dev.iwarp.ift.IftFramer.CRC_LENGTH;
import static dev.iwarp.ift.IftFramer.PREFIX_LENGTH;

/**
 * The direct-read half of {@link IftFrameReader}, as siw's receive path: once a frame's prefix and DDP header
 * are in and checked (sizes, header CRC, VTag, header_size), the sink names the payload's destination, the
 * payload octets go there (read from the socket straight into it through the channel's
 * {@link DirectReadAllocator}, else copied from the buffers received), the payload CRC32C is computed over what
 * was read, and only a matching CRC field completes the placement ({@link UlpduSink#placed}); a mismatch is F4
 * and nothing is reported placed. The destination is one DDP checked before a single octet went there
 * (RFC 5041 §7.2), so a bad CRC can only have overwritten memory the peer was allowed to write. The cumulating
 * half keeps the frame's state (sizes, errors); this class keeps the destination.
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
final class IftPayloadReader {
    /**
     * Small frames read prefix and header first after a large one, at most (as MPA's reader: a header-first
     * read costs one more socket read when the frame turns out small; the large frame before it saved the copy
     * of at least {@link IftFramer#DIRECT_READ_MIN} octets, which pays for two such reads).
     */
    static final int HEADER_FIRST_AFTER_LARGE = 2;

    private final boolean headerCrcPresent;
    private final boolean payloadCrcChecked;
    private final CRC32C crc = new CRC32C();

    /** Where ULPDUs go; null until one is bound. */
    private UlpduSink sink;
    /** The channel's allocator when the socket's octets reach the framer unchanged, else null. */
    private DirectReadAllocator direct;
    /** The sink was asked for this frame's destination already (and wants the whole ULPDU). */
    private boolean asked;
    /** The payload's destination (while reading a payload or its CRC field): ours to release. */
    private ByteBuf destination;
    /** Octets of {@link #destination} the CRC covers so far. */
    private int destinationChecked;
    /** The fewest octets of the shortest next header: prefix, the shortest DDP header the sink answers, header CRC. */
    private int shortestHeaderWire = PREFIX_LENGTH + 1;
    /** Frames still to be read header first after the last large one. */
    private int headerFirst;

    IftPayloadReader(boolean headerCrcPresent, boolean payloadCrcChecked) {
        this.headerCrcPresent = headerCrcPresent;
        this.payloadCrcChecked = payloadCrcChecked;
    }

    /** From now on whole ULPDUs and payload destinations go through {@code s}. */
    void receiveWith(UlpduSink s) {
        sink = s;
        int shortest = Integer.MAX_VALUE;
        for (int firstOctet = 0; firstOctet < 256; firstOctet++) {
            int hl = s.headerLength(firstOctet);
            if (hl > 0) {
                shortest = Math.min(shortest, hl);
            }
        }
        shortestHeaderWire = PREFIX_LENGTH + (shortest == Integer.MAX_VALUE ? 1 : shortest)
                + (headerCrcPresent ? CRC_LENGTH : 0);
    }

    UlpduSink sink() {
        return sink;
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

    /** A new frame's prefix was read: the sink has not been asked about it yet. */
    void newFrame() {
        asked = false;
    }

    boolean asked() {
        return asked;
    }

    boolean isDestination(Object msg) {
        return msg == destination && msg != null;
    }

    /**
     * The frame at {@code in}'s reader index has its prefix and DDP header (checked) in, not its whole payload:
     * when at least {@link IftFramer#DIRECT_READ_MIN} payload octets are still due, asks the sink where the
     * payload goes and on an answer moves the payload octets already here there and has the rest read into it.
     * Whether it went so.
     */
    boolean begin(ByteBuf in, int headerWire, int headerSize, int payloadSize) {
        int here = in.readableBytes() - headerWire;
        if (payloadSize - here < IftFramer.DIRECT_READ_MIN) {
            return false;
        }
        asked = true;
        int start = in.readerIndex();
        int end = in.writerIndex();
        ByteBuf d;
        in.setIndex(start + PREFIX_LENGTH, start + PREFIX_LENGTH + headerSize); // the DDP header alone
        try {
            d = sink.payloadDestination(in, headerSize, payloadSize);
        } finally {
            in.setIndex(start, end);
        }
        if (d == null) {
            return false;
        }
        crc.reset();
        if (payloadCrcChecked && here > 0) {
            Crc32c.update(crc, in, start + headerWire, here);
        }
        if (here > 0) {
            d.writeBytes(in, start + headerWire, here);
        }
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
     * Sizes the next socket read for a frame not read directly ({@code readable} of its {@code frameWire} octets
     * here, its prefix and header {@code headerWire}, payload {@code payloadSize}): while its header is
     * incomplete and its payload large, the read ends at the end of its header; else, for a large frame or
     * shortly after one, it ends at the following frame's header.
     */
    void sizeNextRead(int readable, int headerWire, int frameWire, int payloadSize) {
        if (direct == null || sink == null) {
            return;
        }
        if (!asked && readable < headerWire && payloadSize >= IftFramer.DIRECT_READ_MIN) {
            direct.limitNextRead(headerWire - readable);
        } else if (payloadSize >= IftFramer.DIRECT_READ_MIN || headerFirst > 0) {
            direct.limitNextRead(frameWire - readable + shortestHeaderWire);
        }
    }

    /** A frame of {@code payloadSize} was received and {@code in} holds what follows it. */
    void frameDone(ByteBuf in, int payloadSize) {
        if (payloadSize >= IftFramer.DIRECT_READ_MIN) {
            headerFirst = HEADER_FIRST_AFTER_LARGE;
        } else if (headerFirst > 0) {
            headerFirst--;
        }
        headerDue(in);
    }

    /** Fewer than a prefix of the next frame is here: shortly after a large frame, read its header alone. */
    void headerDue(ByteBuf in) {
        if (headerFirst > 0 && direct != null && sink != null && in.readableBytes() < PREFIX_LENGTH) {
            direct.limitNextRead(shortestHeaderWire - in.readableBytes());
        }
    }

    /** Payload octets that came in an ordinary buffer go to the destination; whether there were any. */
    boolean copyIn(ByteBuf in) {
        int n = Math.min(in.readableBytes(), destination.writableBytes());
        if (n == 0) {
            return false;
        }
        destination.writeBytes(in, n);
        return true;
    }

    /**
     * New octets in the destination: under the CRC. Whether the payload is complete (then the CRC field of
     * {@code trailer} octets follows).
     */
    boolean payloadRead(int trailer) {
        ByteBuf d = destination;
        int w = d.writerIndex();
        if (payloadCrcChecked && w > destinationChecked) {
            Crc32c.update(crc, d, destinationChecked, w - destinationChecked);
        }
        destinationChecked = w;
        d.readerIndex(w); // a handler below the framer that watches the reads sees each read's octets alone
        if (d.isWritable()) {
            return false;
        }
        if (direct != null) {
            direct.readInto(null);
            // the CRC field and the next frame's header only: a large payload behind it is read directly too
            direct.limitNextRead(trailer + shortestHeaderWire);
        }
        return true;
    }

    /** The CRC field of {@code trailer} octets is not all here yet: the next read still ends at the next header. */
    void trailerDue(ByteBuf in, int trailer) {
        if (direct != null) {
            direct.limitNextRead(trailer - in.readableBytes() + shortestHeaderWire);
        }
    }

    /** CRC32C of the payload read into the destination. */
    int payloadCrc() {
        return (int) crc.getValue();
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
