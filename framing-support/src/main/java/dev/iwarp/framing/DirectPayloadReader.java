package dev.iwarp.framing;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

/**
 * The direct-read half of a framing's frame decoder, as siw's receive path: once a framed unit's header is in
 * (and checked by the framing), the {@link UlpduSink} names the payload's destination, the payload octets go
 * there (read from the socket straight into it through the channel's {@link DirectReadAllocator}, else copied
 * from the buffers received), the framing's {@link PayloadCheck} runs over what was read, and only a matching
 * trailer completes the placement. The destination is one the sink checked before a single octet went there
 * (RFC 5041 §7.2), so a bad CRC can only have overwritten memory the peer was allowed to write; RFC 5044 §8
 * allows such placement before the check provided the error is still reported.
 *
 * <p>Owns: the sink, the destination (and its release), the octets of it checked so far, whether the sink was
 * asked about the current unit, and the sizing of socket reads (end a read at the end of a large payload's
 * header, or at the next unit's header after a large one, so that the next large payload is read directly too;
 * and when the peer's messages repeat, take the small units expected between two large ones in the same read as
 * the trailer before them, so that a stream of messages costs two socket reads per large unit, not three).
 * The framing keeps its own state (lengths, stream position, errors), decides when a unit's header is
 * complete and valid, and supplies its wire geometry: the octets in front of a ULPDU header (MPA's
 * ULPDU_Length field, IFT's prefix) and behind it (IFT's header CRC field), and its {@link PayloadCheck}.
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
public final class DirectPayloadReader {
    /**
     * Small units read header first after a large one, at most. Counting: a header-first read costs one more
     * socket read (1-2 µs) when the unit turns out small; the large unit before it saved the copy of at least
     * the direct-read minimum (8 KiB, about 1 µs per 4 KiB), which pays for two such reads.
     */
    public static final int HEADER_FIRST_AFTER_LARGE = 2;

    private final PayloadCheck check;
    private final int directReadMin;
    private final int beforeHeader;
    private final int afterHeader;

    /** Where ULPDUs go; null until one is bound. */
    private UlpduSink sink;
    /** The channel's allocator when the socket's octets reach the framer unchanged, else null. */
    private DirectReadAllocator direct;
    /** The sink was asked for this unit's destination already (and wants the whole ULPDU). */
    private boolean asked;
    /** The payload's destination (while reading a payload or its trailer): ours to release. */
    private ByteBuf destination;
    /** Octets of {@link #destination} the check covers so far. */
    private int destinationChecked;
    /** The fewest octets a ULPDU header the sink answers can have (DDP: 14, a tagged one). */
    private int shortestHeader = 1;
    /** Units still to be read header first after the last large one ({@link #frameDone}). */
    private int headerFirst;
    /** The current unit was counted as a large one ({@link #largeUnit}). */
    private boolean countedLarge;
    /**
     * Octets of the (small) units received since the end of the last large one; -1 before the first large one and
     * once more than the direct-read minimum of them came in a row.
     */
    private int sinceLarge = -1;
    /** Large units back to back in the current run (no small one between them). */
    private int run;
    /** The length of the run the last gap of small units followed (0: none yet), and that gap's octets. */
    private int gapRun;
    private int gap;
    /** Octets of the last large unit in front of its payload (length field or prefix, header, header CRC). */
    private int largeHeaderSpan;

    /**
     * @param check         what the framing checks over a payload and its trailer
     * @param directReadMin the fewest payload octets still due for which a destination is asked (smaller ones are
     *                      copied from the buffers received: a direct read costs extra socket reads)
     * @param beforeHeader  octets of a unit in front of its ULPDU header (MPA: the ULPDU_Length field; IFT: the prefix)
     * @param afterHeader   octets of a unit between its ULPDU header and its payload (IFT: the header CRC field, if any)
     */
    public DirectPayloadReader(PayloadCheck check, int directReadMin, int beforeHeader, int afterHeader) {
        this.check = check;
        this.directReadMin = directReadMin;
        this.beforeHeader = beforeHeader;
        this.afterHeader = afterHeader;
    }

    /** From now on payloads may be read into the destinations {@code s} names. */
    public void receiveWith(UlpduSink s) {
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

    /** Where ULPDUs go; null until one is bound. */
    public UlpduSink sink() {
        return sink;
    }

    /** The fewest octets a ULPDU header the sink answers can have (1 until a sink is bound). */
    public int shortestHeader() {
        return shortestHeader;
    }

    /** Socket reads go into destinations through {@code d} (null: never). */
    public void readDirectlyWith(DirectReadAllocator d) {
        if (destination != null && direct != null) {
            direct.readInto(null);
        }
        direct = d;
        if (destination != null && d != null) {
            d.readInto(destination);
        }
    }

    /** A new unit's header is being read: the sink has not been asked about it yet. */
    public void newFrame() {
        asked = false;
        countedLarge = false;
    }

    /** Whether the sink was asked for the current unit's destination already. */
    public boolean asked() {
        return asked;
    }

    /** Whether {@code msg} is the destination a socket read was just made into. */
    public boolean isDestination(Object msg) {
        return msg == destination && msg != null;
    }

    /**
     * The unit at {@code in}'s reader index has its ULPDU header ({@code headerLength} octets at offset
     * {@code headerOffset}, checked by the framing) in, not its whole payload ({@code payloadLength} octets at
     * offset {@code payloadOffset}): when at least the direct-read minimum of payload octets is still due, asks
     * the sink where the payload goes (showing it the header, and the payload octets here when they follow it
     * directly), and on an answer copies the payload octets here there, skips {@code in}'s octets and has the
     * rest read into it. Whether it went so (then {@link #copyIn} and {@link #payloadRead} follow).
     */
    public boolean begin(ByteBuf in, int headerOffset, int headerLength, int payloadOffset, int payloadLength) {
        int start = in.readerIndex();
        int end = in.writerIndex();
        int here = end - start - payloadOffset;
        if (here < 0 || payloadLength - here < directReadMin) {
            return false;
        }
        asked = true;
        largeUnit(payloadOffset);
        int headerEnd = start + headerOffset + headerLength;
        ByteBuf d;
        in.setIndex(start + headerOffset, payloadOffset == headerOffset + headerLength ? end : headerEnd);
        try {
            d = sink.payloadDestination(in, headerLength, payloadLength);
        } finally {
            in.setIndex(start, end);
        }
        if (d == null) {
            return false;
        }
        check.start(in, start + payloadOffset);
        if (here > 0) {
            d.writeBytes(in, start + payloadOffset, here);
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
     * Sizes the next socket read for a unit not read directly ({@code readable} of its {@code wireLength} octets
     * here; its header complete at {@code headerEnd} octets, after which {@code payloadDue} payload octets
     * follow; {@code size} its measure against the minimum, MPA's ULPDU_Length, IFT's payload_size): while its
     * header is incomplete and its payload large, the read ends at the end of its header (then {@link #begin}
     * can name the destination); else, for a large unit or shortly after one, it ends at the following unit's
     * header, or at the end of the next large unit's header when small units are expected before it, so that a
     * large payload behind it is read directly.
     */
    public void sizeNextRead(int readable, int headerEnd, int payloadDue, int wireLength, int size) {
        if (direct == null || sink == null) {
            return;
        }
        if (!asked && readable < headerEnd && payloadDue >= directReadMin) {
            direct.limitNextRead(headerEnd - readable);
        } else if (size >= directReadMin) {
            largeUnit(headerEnd);
            direct.limitNextRead(wireLength - readable + expectedGap() + headerSpan());
        } else if (headerFirst > 0 || inGap()) {
            direct.limitNextRead(Math.max(wireLength - readable + headerSpan(), gapDue(readable)));
        }
    }

    /**
     * A unit of {@code size} (MPA's ULPDU_Length, IFT's payload_size) and {@code wireLength} octets on the wire was
     * received and {@code in} holds what follows it. A stream that carries large units likely carries more: for
     * the next {@value #HEADER_FIRST_AFTER_LARGE} after a large one, when nothing of the next is here yet, the next
     * read takes only its header, so that a large payload is read directly whenever the peer sends it (a message's
     * last, short unit or a small control message in between does not end this). Or, while the small units that
     * followed the same run of large ones last time are due, up to the header after them.
     */
    public void frameDone(ByteBuf in, int size, int wireLength) {
        if (size >= directReadMin) {
            largeUnit(largeHeaderSpan);
            headerFirst = HEADER_FIRST_AFTER_LARGE;
        } else {
            if (sinceLarge >= 0) {
                sinceLarge += wireLength;
                if (sinceLarge > directReadMin) {
                    sinceLarge = -1; // too long a gap to read ahead of: copying it costs more than a read
                }
            }
            if (headerFirst > 0) {
                headerFirst--;
            }
        }
        headerDue(in);
    }

    /**
     * Fewer than the octets in front of the next unit's header are here: shortly after a large unit, the next read
     * takes its header alone, or the small units expected before the next large one and its header.
     */
    public void headerDue(ByteBuf in) {
        if ((headerFirst > 0 || inGap()) && direct != null && sink != null && in.readableBytes() < beforeHeader) {
            int readable = in.readableBytes();
            direct.limitNextRead(Math.max(headerSpan() - readable, gapDue(readable)));
        }
    }

    /**
     * Payload octets that came in an ordinary buffer (a read begun before the destination was known) go to the
     * destination; whether there were any (then {@link #payloadRead} follows).
     */
    public boolean copyIn(ByteBuf in) {
        int n = Math.min(in.readableBytes(), destination.writableBytes());
        if (n == 0) {
            return false;
        }
        destination.writeBytes(in, n);
        return true;
    }

    /**
     * New octets in the destination: under the check. Whether the payload is complete (then the {@code trailer}
     * octets behind it are read as usual, {@link #readTrailer}).
     */
    public boolean payloadRead(int trailer) {
        ByteBuf d = destination;
        int w = d.writerIndex();
        if (w > destinationChecked) {
            check.update(d, destinationChecked, w - destinationChecked);
        }
        destinationChecked = w;
        // a handler below the framer that watches the reads (a capture) sees each read's octets alone
        d.readerIndex(w);
        if (d.isWritable()) {
            return false;
        }
        if (direct != null) {
            direct.readInto(null);
            // the trailer, the small units expected before the next large one, and its header: a large payload
            // behind them is read directly too, and one read brings all that lies between two payloads
            direct.limitNextRead(trailer + expectedGap() + headerSpan());
        }
        return true;
    }

    /**
     * The {@code trailer} octets behind a payload read into its destination: whether they are in; once they are,
     * the framing's check runs over them (its error is thrown on a mismatch), they are skipped and the
     * destination is released. The caller then reports the placement ({@link UlpduSink#placed}).
     */
    public boolean readTrailer(ChannelHandlerContext ctx, ByteBuf in, int trailer) {
        if (in.readableBytes() < trailer) {
            if (direct != null) { // the socket held part of it: the next read still ends at the next header
                direct.limitNextRead(trailer - in.readableBytes() + expectedGap() + headerSpan());
            }
            return false;
        }
        try {
            check.checkTrailer(ctx, in, trailer);
        } catch (RuntimeException e) {
            abandon(); // placed, inside the range the sink checked; never reported placed
            throw e;
        }
        in.skipBytes(trailer);
        abandon();
        return true;
    }

    /** Stops reading into a destination (closing, removed, failed) and releases it; whether there was one. */
    public boolean abandon() {
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

    /** The octets of the shortest next unit up to its payload. */
    private int shortestNextHeader() {
        return beforeHeader + shortestHeader + afterHeader;
    }

    /**
     * The octets in front of the payload expected next after a large unit: as many as the last large unit's (a Send's
     * untagged header is longer than a Write's tagged one), the shortest unit's at the least.
     */
    private int headerSpan() {
        return Math.max(largeHeaderSpan, shortestNextHeader());
    }

    /**
     * The current unit is a large one with {@code headerSpan} octets in front of its payload (once per unit): ends
     * the gap of small units since the last large one, which is remembered with the run of large units it followed.
     */
    private void largeUnit(int headerSpan) {
        if (countedLarge) {
            return;
        }
        countedLarge = true;
        largeHeaderSpan = headerSpan;
        if (sinceLarge == 0) {
            run++;
        } else {
            gap = Math.max(sinceLarge, 0);
            gapRun = sinceLarge > 0 ? run : 0;
            run = 1;
        }
        sinceLarge = 0;
    }

    /**
     * Octets of small units expected between the current (or last) large unit and the next large one: a peer's
     * messages tend to repeat, each a run of large units and a short last one (a 64 KiB Write at MULPDU 64768: one
     * large unit and 800 octets), so once the current run is as long as the one the last gap followed, the read
     * after it takes that gap and the next header too. A wrong guess copies at most the direct-read minimum of the
     * next payload's octets, which a correct one saves in socket reads.
     */
    private int expectedGap() {
        return sinceLarge >= 0 && run == gapRun ? gap : 0;
    }

    /**
     * Octets from the current small unit's {@code readable} octets here to the end of the next large unit's header,
     * as expected ({@link #expectedGap}); 0 when no such gap is due.
     */
    private int gapDue(int readable) {
        return inGap() ? expectedGap() + headerSpan() - sinceLarge - readable : 0;
    }

    /** Small units expected before the next large one are still due. */
    private boolean inGap() {
        return sinceLarge >= 0 && sinceLarge < expectedGap();
    }
}
