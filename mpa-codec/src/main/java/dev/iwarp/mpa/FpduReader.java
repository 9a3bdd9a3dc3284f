package dev.iwarp.mpa;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.PeerAddress;
import dev.iwarp.framing.UlpduSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.zip.CRC32C;

import static dev.iwarp.mpa.MpaFramer.CRC_LENGTH;
import static dev.iwarp.mpa.MpaFramer.LENGTH_FIELD;
import static dev.iwarp.mpa.MpaFramer.MARKER_INTERVAL;
import static dev.iwarp.mpa.MpaFramer.MARKER_LENGTH;

/**
 * The inbound half of {@link MpaFramer}: a pure byte-stream FPDU decoder (it never depends on how
 * TCP segmented the stream). Each FPDU yields one ULPDU, a retained slice of the received octets (a
 * read-only view of its pieces, {@link FpduCumulation}, when markers sit inside it). CRC and markers are checked before anything is
 * delivered; after an error nothing more is delivered on this half connection (RFC 5044 §8).
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
final class FpduReader {
    /** The framer's logger: both halves log as {@code MpaFramer}. */
    private static final Logger LOG = LoggerFactory.getLogger(MpaFramer.class);

    private enum State {
        /** Waiting for the (optional leading marker and) ULPDU_Length of the next FPDU. */
        READ_HEADER,
        /** ULPDU_Length known; waiting for the whole FPDU. */
        READ_FPDU,
        /** The header went to the sink, which named a destination: the payload is read into it. */
        READ_PAYLOAD,
        /** The payload is in its destination: waiting for the pad and CRC. */
        READ_TRAILER,
        /** An error was reported; nothing more is delivered on this half connection (RFC 5044 §8). */
        FAILED
    }

    private final boolean crc;
    private final boolean markersRx;
    private final int maxUlpduLength;
    private final CRC32C rxCrc = new CRC32C();
    /** CRC input over direct memory through one reused NIO view (no view per FPDU). */
    private final Crc32cFeed rxFeed = new Crc32cFeed();

    private State state = State.READ_HEADER;
    /** Octets received since this direction's SeqStart (mod 2^32; only mod 512 matters). */
    private int rxPos;
    private int fpduLead;
    private int fpduUlpduLength;
    private int fpduWireLength;
    private long fpdusReceived;
    /** ULPDUs pass up as the received buffer itself (MpaFramer#lendUlpdus). */
    private boolean lend;
    /** The buffer a ULPDU split by markers passes up as, taken again once released; null until the first. */
    private FpduCumulation markerUlpdu;

    /** Where ULPDUs go (MpaFramer#receiveWith); null: up the pipeline. */
    private UlpduSink sink;
    /** The channel's allocator while socket reads may go into a destination, else null; asked per FPDU. */
    private java.util.function.Supplier<DirectReadAllocator> directReads;
    /** What {@link #directReads} answered for the FPDU being read into its destination. */
    private DirectReadAllocator direct;
    /** The sink was asked for this FPDU's destination already (and wants the whole ULPDU). */
    private boolean asked;
    /** The payload's destination (READ_PAYLOAD, READ_TRAILER): ours to release. */
    private ByteBuf destination;
    /** Octets of {@link #destination} the CRC covers so far. */
    private int destinationChecked;
    /** Run once an FPDU checked out, before its ULPDU goes to the sink (RFC 5044 §7.1.2 rule 4's release). */
    private Runnable validFpdu;
    /** The DDP header length of the FPDU read directly. */
    private int headerLength;

    FpduReader(boolean crc, boolean markersRx, int maxUlpduLength) {
        this.crc = crc;
        this.markersRx = markersRx;
        this.maxUlpduLength = maxUlpduLength;
    }

    /**
     * Decodes at most one FPDU from {@code in} into {@code out}: one ULPDU is passed on before the
     * next is sliced, which keeps the number of live slices (and the recycler's overflow) low. Once
     * {@link #lendUlpdus()} was called and {@code mayLend}, the ULPDU passes up as {@code in} itself.
     *
     * @return whether a valid FPDU was received
     * @throws MpaException code 2 (CRC), 3 (marker) or 5 (ULPDU_Length above the maximum)
     */
    boolean decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out, boolean mayLend) {
        for (;;) {
            switch (state) {
                case READ_HEADER: {
                    int lead = markersRx && (rxPos & (MARKER_INTERVAL - 1)) == 0 ? MARKER_LENGTH : 0;
                    if (in.readableBytes() < lead + LENGTH_FIELD) {
                        return false;
                    }
                    int length = in.getUnsignedShort(in.readerIndex() + lead);
                    if (length > maxUlpduLength) {
                        throw fail(ctx, in, MpaErrorCode.LOCAL_CATASTROPHIC, "ULPDU_Length " + length
                                + " exceeds the configured maximum of " + maxUlpduLength + " octets");
                    }
                    fpduLead = lead;
                    asked = false;
                    fpduUlpduLength = length;
                    fpduWireLength = MpaFramer.wireLength(rxPos, length, markersRx);
                    state = State.READ_FPDU;
                    break;
                }
                case READ_FPDU: {
                    if (in.readableBytes() < fpduWireLength) {
                        if (sink != null && !asked && !markersRx && mayLend && readDirectly(in)) {
                            break;
                        }
                        if (sink != null && !markersRx && mayLend) {
                            endNextReadAtHeader(in);
                        }
                        return false;
                    }
                    if (sink != null) {
                        state = State.READ_HEADER;
                        sinkFpdu(ctx, in);
                        return true;
                    }
                    if (lend && mayLend) {
                        state = State.READ_HEADER;
                        lendFpdu(ctx, in);
                        return true;
                    }
                    ByteBuf ulpdu = readFpdu(ctx, in);
                    out.add(ulpdu);
                    state = State.READ_HEADER;
                    // one ULPDU per call (see above)
                    return true;
                }
                case READ_PAYLOAD: {
                    int n = Math.min(in.readableBytes(), destination.writableBytes());
                    if (n == 0) {
                        return false;
                    }
                    // octets that came in an ordinary buffer (a read begun before the destination was known)
                    destination.writeBytes(in, n);
                    payloadRead(ctx);
                    break;
                }
                case READ_TRAILER:
                    return readTrailer(ctx, in);
                case FAILED:
                    in.skipBytes(in.readableBytes());
                    return false;
                default:
                    throw new IllegalStateException(state.name());
            }
        }
    }

    /** From now on ULPDUs go to {@code s}, and payloads are read through {@code d} (may be null). */
    void receiveWith(UlpduSink s, java.util.function.Supplier<DirectReadAllocator> d, Runnable valid) {
        sink = s;
        directReads = d;
        validFpdu = valid;
    }

    /** Whether {@code msg} is the destination a socket read was just made into. */
    boolean isDestination(Object msg) {
        return msg == destination && msg != null;
    }

    /**
     * The payload octets a socket read just placed in {@link #destination} (the caller releases the read's
     * reference): the CRC takes them in. Once the payload is complete, the trailer is read as usual.
     */
    void destinationRead(ChannelHandlerContext ctx) {
        if (state == State.READ_PAYLOAD) {
            payloadRead(ctx);
        }
    }

    /** Stops reading into a destination (closing, removed, failed) and releases it. */
    void abandon() {
        ByteBuf d = destination;
        if (d != null) {
            state = State.FAILED; // the rest of this FPDU has nowhere to go: nothing more is delivered
            destination = null;
            if (direct != null) {
                direct.readInto(null);
            }
            d.release();
        }
    }

    /**
     * RFC 5044 §8 allows a receiver to place before the CRC is checked, as siw does, provided an error is still
     * reported: when at least {@link MpaFramer#DIRECT_READ_MIN} payload octets of this FPDU are still due, asks
     * the sink where the payload goes, and on an answer copies the payload octets already here there and reads
     * the rest into it. Whether it went so (the state is then READ_PAYLOAD).
     */
    private boolean readDirectly(ByteBuf in) {
        int start = in.readerIndex();
        int here = in.readableBytes() - LENGTH_FIELD;
        if (here < 1) {
            return false;
        }
        int hl = sink.headerLength(in.getUnsignedByte(start + LENGTH_FIELD));
        int payloadLength = fpduUlpduLength - hl;
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
        headerLength = hl;
        state = State.READ_PAYLOAD;
        direct = directReads.get();
        if (direct != null) {
            direct.readInto(d);
        }
        return true;
    }

    /**
     * A large FPDU not read directly (too little of it due): the next read ends at the following FPDU's DDP
     * header, so that a large payload behind it is read directly.
     */
    private void endNextReadAtHeader(ByteBuf in) {
        if (fpduUlpduLength < MpaFramer.DIRECT_READ_MIN || in.readableBytes() <= LENGTH_FIELD) {
            return;
        }
        DirectReadAllocator d = directReads.get();
        if (d != null) {
            int hl = sink.headerLength(in.getUnsignedByte(in.readerIndex() + LENGTH_FIELD));
            d.limitNextRead(fpduWireLength - in.readableBytes() + LENGTH_FIELD + hl);
        }
    }

    /** New octets in {@link #destination}: under the CRC; once the payload is complete, on to the trailer. */
    private void payloadRead(ChannelHandlerContext ctx) {
        ByteBuf d = destination;
        int w = d.writerIndex();
        if (crc && w > destinationChecked) {
            rxFeed.update(rxCrc, d, destinationChecked, w - destinationChecked);
        }
        destinationChecked = w;
        if (!d.isWritable()) {
            state = State.READ_TRAILER;
            if (direct != null) {
                direct.readInto(null);
                // pad, CRC and the next FPDU's header only: a large payload behind it is read directly too
                direct.limitNextRead(fpduWireLength - fpduUlpduLength + headerLength);
            }
        }
    }

    /** Pad and CRC of an FPDU whose payload was read into its destination (RFC 5044 §8 code 2). */
    private boolean readTrailer(ChannelHandlerContext ctx, ByteBuf in) {
        int trailer = fpduWireLength - LENGTH_FIELD - fpduUlpduLength;
        if (in.readableBytes() < trailer) {
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
                throw fail(ctx, in, MpaErrorCode.CRC_ERROR, String.format(
                        "FPDU #%d at stream offset %d (ULPDU_Length %d) carries CRC %08x, computed %08x",
                        fpdusReceived + 1, Integer.toUnsignedLong(rxPos), fpduUlpduLength, received, computed));
            }
        }
        in.skipBytes(trailer);
        passed(ctx, fpduWireLength);
        abandon();
        state = State.READ_HEADER;
        sink.placed();
        return true;
    }

    /** Checks the FPDU at the reader index of {@code in} and hands its ULPDU to the sink, lent for the call. */
    private void sinkFpdu(ChannelHandlerContext ctx, ByteBuf in) {
        int start = in.readerIndex();
        int end = in.writerIndex();
        checkFpdu(ctx, in, start);
        validFpdu.run(); // writes held until now leave before any the ULPDU causes
        if (markersRx) {
            ByteBuf ulpdu = extractUlpdu(ctx.alloc(), in, start); // before passed(): marker positions
            in.skipBytes(fpduWireLength);
            passed(ctx, fpduWireLength);
            try {
                sink.ulpdu(ulpdu);
            } finally {
                ulpdu.release();
            }
            return;
        }
        passed(ctx, fpduWireLength);
        int ulpduStart = start + LENGTH_FIELD;
        in.setIndex(ulpduStart, ulpduStart + fpduUlpduLength);
        try {
            sink.ulpdu(in);
        } finally {
            in.setIndex(start + fpduWireLength, end);
        }
    }

    void lendUlpdus() {
        lend = true;
    }

    boolean lendsUlpdus() {
        return lend;
    }

    /**
     * Checks the FPDU at the reader index of {@code in} and passes its ULPDU up as {@code in} itself, the
     * indices set to the ULPDU and restored past the FPDU afterwards (no ULPDU object).
     */
    private void lendFpdu(ChannelHandlerContext ctx, ByteBuf in) {
        int start = in.readerIndex();
        int end = in.writerIndex();
        checkFpdu(ctx, in, start);
        int ulpduStart = start + fpduLead + LENGTH_FIELD;
        passed(ctx, fpduWireLength);
        in.setIndex(ulpduStart, ulpduStart + fpduUlpduLength);
        in.retain();
        try {
            ctx.fireChannelRead(in);
        } finally {
            in.setIndex(start + fpduWireLength, end);
        }
    }

    private ByteBuf readFpdu(ChannelHandlerContext ctx, ByteBuf in) {
        int start = in.readerIndex();
        checkFpdu(ctx, in, start);
        ByteBuf ulpdu = extractUlpdu(ctx.alloc(), in, start);
        in.skipBytes(fpduWireLength);
        passed(ctx, fpduWireLength);
        return ulpdu;
    }

    /** Counts an FPDU of {@code wireLength} octets as received. */
    private void passed(ChannelHandlerContext ctx, int wireLength) {
        if (LOG.isTraceEnabled()) {
            LOG.trace("{} rx FPDU #{} offset {} ULPDU_Length {} wire {}", ctx.channel(), fpdusReceived + 1,
                    Integer.toUnsignedLong(rxPos), fpduUlpduLength, wireLength);
        }
        rxPos += wireLength;
        fpdusReceived++;
    }

    /** The CRC and markers of the FPDU at {@code start} (RFC 5044 §8 codes 2 and 3). */
    private void checkFpdu(ChannelHandlerContext ctx, ByteBuf in, int start) {
        int crcIndex = start + fpduWireLength - CRC_LENGTH;
        if (crc) {
            rxCrc.reset();
            rxFeed.update(rxCrc, in, start, fpduWireLength - CRC_LENGTH);
            int computed = (int) rxCrc.getValue();
            int received = in.getIntLE(crcIndex);
            if (computed != received) {
                // RFC 5044 §8 code 2
                throw fail(ctx, in, MpaErrorCode.CRC_ERROR, String.format(
                        "FPDU #%d at stream offset %d (ULPDU_Length %d) carries CRC %08x, computed %08x",
                        fpdusReceived + 1, Integer.toUnsignedLong(rxPos), fpduUlpduLength,
                        received, computed));
            }
        }
        if (markersRx) {
            for (int p = (-rxPos) & (MARKER_INTERVAL - 1); p < fpduWireLength - CRC_LENGTH; p += MARKER_INTERVAL) {
                // FPDUPTR's two low bits are treated as zero (RFC 5044 §4.3)
                int fpduPtr = in.getUnsignedShort(start + p + 2) & 0xFFFC;
                if (fpduPtr != p) {
                    // RFC 5044 §8 code 3
                    throw fail(ctx, in, MpaErrorCode.MARKER_MISMATCH, String.format(
                            "marker at stream offset %d has FPDUPTR %d but the FPDU (ULPDU_Length %d) starts %d octets before it",
                            Integer.toUnsignedLong(rxPos + p), fpduPtr, fpduUlpduLength, p));
                }
            }
        }
    }

    private ByteBuf extractUlpdu(ByteBufAllocator alloc, ByteBuf in, int start) {
        int off = fpduLead + LENGTH_FIELD;
        int remaining = fpduUlpduLength;
        if (!markersRx || nextMarker(off) >= off + remaining) {
            return in.retainedSlice(start + off, remaining);
        }
        // the pieces between markers, over the received octets themselves: the reader's own buffer, taken again
        // once the ULPDU was released (a composite of slices cost a slice and a component per piece)
        FpduCumulation pieces = markerUlpdu = FpduCumulation.takeAgain(markerUlpdu, alloc);
        while (remaining > 0) {
            int n = Math.min(remaining, nextMarker(off) - off);
            pieces.add(in.retain(), start + off, n);
            off += n + MARKER_LENGTH;
            remaining -= n;
        }
        return pieces;
    }

    /** Offset (relative to the current FPDU start) of the first marker position at or after {@code off}. */
    private int nextMarker(int off) {
        return off + ((-(rxPos + off)) & (MARKER_INTERVAL - 1));
    }

    private MpaException fail(ChannelHandlerContext ctx, ByteBuf in, MpaErrorCode code, String what) {
        state = State.FAILED;
        abandon();
        in.skipBytes(in.readableBytes());
        MpaException e = new MpaException(code, what);
        LOG.warn("{} peer {}: {}; no further FPDUs are delivered on this half connection",
                ctx.channel(), ctx.channel().remoteAddress(), e.getMessage());
        return e;
    }

    /** Whether an FPDU's payload is being read into its destination (its octets are not in the cumulation). */
    boolean readingPayload() {
        return state == State.READ_PAYLOAD || state == State.READ_TRAILER;
    }

    /** Whether an error was reported: nothing more is delivered on this half connection. */
    boolean failed() {
        return state == State.FAILED;
    }

    /** At the end of the stream: drops the octets of an incomplete FPDU (MPA error 1), saying so. */
    void discardIncomplete(ChannelHandlerContext ctx, ByteBuf in) {
        if (in.isReadable() && state != State.FAILED) {
            LOG.debug("{} closed with {} octets of an incomplete FPDU (MPA error 1)", PeerAddress.of(ctx),
                    in.readableBytes());
            in.skipBytes(in.readableBytes());
        }
    }
}
