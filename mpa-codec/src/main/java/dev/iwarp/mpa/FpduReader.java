package dev.iwarp.mpa;

import dev.iwarp.mpa.internal.FpduCumulation;
import dev.iwarp.framing.DirectPayloadReader;
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
    /** Whether each FPDU is traced: asked once, when the connection's framer is made (not per FPDU). */
    private final boolean trace = LOG.isTraceEnabled();
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

    long fpdusReceived() {
        return fpdusReceived;
    }
    /** The buffer a ULPDU split by markers passes up as, taken again once released; null until the first. */
    private FpduCumulation markerUlpdu;

    /** Where ULPDUs go (MpaFramer#receiveWith); null: up the pipeline. */
    private UlpduSink sink;
    /** Large payloads read into their destination (READ_PAYLOAD, READ_TRAILER). */
    private final DirectPayloadReader payloads;
    /** Run once an FPDU checked out, before its ULPDU goes to the sink (RFC 5044 §7.1.2 rule 4's release). */
    private Runnable validFpdu;

    FpduReader(boolean crc, boolean markersRx, int maxUlpduLength) {
        this.crc = crc;
        this.markersRx = markersRx;
        this.maxUlpduLength = maxUlpduLength;
        this.payloads = new DirectPayloadReader(new FpduPayloadCheck(this, crc, rxCrc, rxFeed), MpaFramer.DIRECT_READ_MIN, LENGTH_FIELD, 0);
    }

    /**
     * Decodes at most one FPDU from {@code in} into {@code out}: one ULPDU is passed on before the
     * next is sliced, which keeps the number of live slices (and the recycler's overflow) low. A bound sink
     * gets it lent instead; payloads are read into their destinations only when {@code mayLend} (no outbound
     * FPDU is held by RFC 5044 §7.1.2 rule 4, so held writes leave before anything the ULPDU causes).
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
                        if (sink != null && !markersRx && mayLend) {
                            payloads.headerDue(in);
                        }
                        return false;
                    }
                    int length = in.getUnsignedShort(in.readerIndex() + lead);
                    if (length > maxUlpduLength) {
                        throw fail(ctx, in, MpaErrorCode.LOCAL_CATASTROPHIC, "ULPDU_Length " + length
                                + " exceeds the configured maximum of " + maxUlpduLength + " octets");
                    }
                    fpduLead = lead;
                    payloads.newFrame();
                    fpduUlpduLength = length;
                    fpduWireLength = MpaFramer.wireLength(rxPos, length, markersRx);
                    state = State.READ_FPDU;
                    break;
                }
                case READ_FPDU: {
                    if (in.readableBytes() < fpduWireLength) {
                        if (sink != null && !payloads.asked() && !markersRx && mayLend
                                && beginPayload(in)) {
                            state = State.READ_PAYLOAD;
                            break;
                        }
                        if (sink != null && !markersRx && mayLend) {
                            sizeNextRead(in);
                        }
                        return false;
                    }
                    if (sink != null) {
                        state = State.READ_HEADER;
                        sinkFpdu(ctx, in);
                        if (!markersRx && mayLend) {
                            payloads.frameDone(in, fpduUlpduLength, fpduWireLength);
                        }
                        return true;
                    }
                    ByteBuf ulpdu = readFpdu(ctx, in);
                    out.add(ulpdu);
                    state = State.READ_HEADER;
                    // one ULPDU per call (see above)
                    return true;
                }
                case READ_PAYLOAD:
                    // octets that came in an ordinary buffer (a read begun before the destination was known)
                    if (!payloads.copyIn(in)) {
                        return false;
                    }
                    payloadRead();
                    break;
                case READ_TRAILER:
                    if (!payloads.readTrailer(ctx, in, trailerLength())) {
                        return false;
                    }
                    passed(ctx, fpduWireLength);
                    state = State.READ_HEADER;
                    payloads.frameDone(in, fpduUlpduLength, fpduWireLength);
                    sink.placed();
                    return true;
                case FAILED:
                    in.skipBytes(in.readableBytes());
                    return false;
                default:
                    throw new IllegalStateException(state.name());
            }
        }
    }

    /** From now on ULPDUs go to {@code s}. */
    void receiveWith(UlpduSink s, Runnable valid) {
        sink = s;
        payloads.receiveWith(s);
        validFpdu = valid;
    }

    /** Socket reads go into payload destinations through {@code d} (null: never). */
    void readDirectlyWith(DirectReadAllocator d) {
        payloads.readDirectlyWith(d);
    }

    /** Whether {@code msg} is the destination a socket read was just made into. */
    boolean isDestination(Object msg) {
        return payloads.isDestination(msg);
    }

    /**
     * The payload octets a socket read just placed in the destination (the caller releases the read's
     * reference): the CRC takes them in. Once the payload is complete, the trailer is read as usual.
     */
    void destinationRead(ChannelHandlerContext ctx) {
        if (state == State.READ_PAYLOAD) {
            payloadRead();
        }
    }

    /** New payload octets in the destination; once the payload is complete, on to the trailer. */
    private void payloadRead() {
        if (payloads.payloadRead(trailerLength())) {
            state = State.READ_TRAILER;
        }
    }

    /** Stops reading into a destination (closing, removed, failed) and releases it. */
    void abandon() {
        if (payloads.abandon()) {
            state = State.FAILED; // the rest of this FPDU has nowhere to go: nothing more is delivered
        }
    }

    /** RFC 5044 §8 code 2 for the current FPDU, whose CRC field carries {@code received}. */
    MpaException crcError(ChannelHandlerContext ctx, ByteBuf in, int received, int computed) {
        return fail(ctx, in, MpaErrorCode.CRC_ERROR, String.format(
                "FPDU #%d at stream offset %d (ULPDU_Length %d) carries CRC %08x, computed %08x",
                fpdusReceived + 1, Integer.toUnsignedLong(rxPos), fpduUlpduLength, received, computed));
    }

    /** Pad and CRC of the current FPDU (no markers: direct reads apply only without them). */
    private int trailerLength() {
        return fpduWireLength - LENGTH_FIELD - fpduUlpduLength;
    }

    /**
     * When the FPDU at {@code in}'s reader index has its DDP header in and a large payload still due, the sink
     * names the payload's destination and the rest is read there ({@link DirectPayloadReader#begin}).
     */
    private boolean beginPayload(ByteBuf in) {
        int here = in.readableBytes() - LENGTH_FIELD;
        if (here < 1) {
            return false;
        }
        int hl = sink.headerLength(in.getUnsignedByte(in.readerIndex() + LENGTH_FIELD));
        if (hl <= 0 || here < hl) {
            return false;
        }
        return payloads.begin(in, LENGTH_FIELD, hl, LENGTH_FIELD + hl, fpduUlpduLength - hl);
    }

    /** Sizes the next socket read for the FPDU at {@code in}'s reader index, not read directly. */
    private void sizeNextRead(ByteBuf in) {
        int readable = in.readableBytes();
        int hl = readable > LENGTH_FIELD ? sink.headerLength(in.getUnsignedByte(in.readerIndex() + LENGTH_FIELD)) : 0;
        int headerEnd = LENGTH_FIELD + Math.max(hl, payloads.shortestHeader());
        payloads.sizeNextRead(readable, headerEnd, fpduUlpduLength + LENGTH_FIELD - headerEnd, fpduWireLength,
                fpduUlpduLength);
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
        if (trace) {
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
                throw crcError(ctx, in, received, computed); // RFC 5044 §8 code 2
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
        LOG.warn("peer {}: {}; no further FPDUs are delivered on this half connection", PeerAddress.of(ctx),
                e.getMessage());
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
