package dev.iwarp.vitcp;

import dev.iwarp.framing.DirectPayloadReader;
import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.UlpduSink;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

/**
 * The direct-read half of {@link VitcpSegmentDecoder}: a data segment whose headers are in and checked, and of
 * whose payload at least {@link #DIRECT_READ_MIN} octets are still due, has its payload read straight into the
 * destination the VI names ({@link ViPayloadPlacement}), through framing-support's {@link DirectPayloadReader}
 * (the one direct-read driver MPA and IFT use too) with VI/TCP's trailer CRC as its check
 * ({@link VitcpPayloadCheck}); the segment then goes on as a {@link ViSegment#placed()} one whose content is a
 * view of the destination.
 *
 * <p>Geometry as the driver sees it: the "ULPDU header" the decoder hands over is the VI Segment Header with the
 * RDMA Header when there is one (24 or 40 octets), the payload follows it directly, and the trailer is the CRC
 * field (4 octets) when the CRC option is on. For sizing reads the driver sees the segment's first
 * {@value VitcpSegmentDecoder#SIZING_OCTETS} octets (Version, Type/Flags, Segment Length: what sizes a segment, as
 * IFT's prefix does a frame) in front of the rest of the headers, so that after a large segment a read that finds
 * fewer of them takes the next segment's headers alone.
 *
 * <p>Not thread-safe: confined to the decoder's event loop.
 */
final class VitcpPayloadReader {
    /**
     * The fewest payload octets still due for which the destination is asked. A direct read costs up to two more
     * socket reads per segment (about 1-2 µs each); VI/TCP segments are at most the MTU (8 KiB by default), so
     * MPA's and IFT's 8 KiB would leave a default-MTU Send out whenever a few payload octets came with its
     * header. Copying 4 KiB costs about as much as one socket read.
     */
    static final int DIRECT_READ_MIN = 4096;

    /**
     * A read that ends at the next segment's headers takes this many octets of them: an RDMA Write's VI Segment
     * and RDMA Headers, the most a data segment's destination depends on, so that one read brings any segment's
     * headers (a Send's or Read Response's first 16 payload octets come along and are copied).
     */
    static final int LONGEST_DATA_HEADERS = ViSegment.HEADER_LENGTH + ViRdmaHeader.LENGTH;

    private final VitcpPayloadCheck check;
    private final DirectPayloadReader payloads;
    private ViPayloadPlacement placement;
    /** The fields of the segment whose payload is being read (or asked about). */
    private ViSegment.Builder header;
    private boolean trailer;
    /** Our reference to the destination: the placed segment's content; null when no payload is read into place. */
    private ByteBuf view;

    VitcpPayloadReader(VitcpCrcMode mode) {
        this.check = new VitcpPayloadCheck(mode);
        this.payloads = new DirectPayloadReader(check, DIRECT_READ_MIN, VitcpSegmentDecoder.SIZING_OCTETS, 0);
    }

    /** The VI's answers for data segments' payloads from now on (null: every segment is received whole). */
    void receiveWith(ViPayloadPlacement p) {
        placement = p;
        if (p != null && payloads.sink() == null) {
            payloads.receiveWith(new PlacementSink());
        }
    }

    /** Socket reads go into payload destinations through {@code d} (null: never; the octets are copied there). */
    void readDirectlyWith(DirectReadAllocator d) {
        payloads.readDirectlyWith(d);
    }

    /** Whether {@code msg} is the destination a socket read was just made into. */
    boolean isDestination(Object msg) {
        return payloads.isDestination(msg);
    }

    /** Whether a payload is being read into its destination (its octets are not in the cumulation). */
    boolean reading() {
        return view != null;
    }

    /** A new segment's header is being read. */
    void newSegment() {
        payloads.newFrame();
    }

    /**
     * Whether {@link #begin} may ask the VI about a segment of which {@code readable} octets are here: a placement
     * is bound, it was not asked about this segment yet, the headers ({@code headersLength} octets) are in and at
     * least {@link #DIRECT_READ_MIN} of its {@code payloadLength} payload octets are still due.
     */
    boolean mayBegin(int readable, int headersLength, int payloadLength) {
        return placement != null && !payloads.asked() && readable >= headersLength
                && payloadLength - (readable - headersLength) >= DIRECT_READ_MIN;
    }

    /**
     * The segment at {@code in}'s reader index has its headers ({@code headersLength} octets, checked by the
     * decoder; their fields in {@code fields}) in, not its whole payload ({@code payloadLength} octets, then the
     * trailer if {@code hasTrailer}): asks the VI where the payload goes when enough of it is still due, and on an
     * answer consumes {@code in} (the payload octets here go to the destination) and reads the rest there. Whether
     * it went so.
     */
    boolean begin(ByteBuf in, ViSegment.Builder fields, int headersLength, int payloadLength, boolean hasTrailer) {
        header = fields;
        trailer = hasTrailer;
        check.expectTrailer(hasTrailer);
        boolean began = payloads.begin(in, 0, headersLength, headersLength, payloadLength);
        if (!began) {
            header = null;
        }
        return began;
    }

    /** Sizes the next socket read for a segment not read into place ({@link DirectPayloadReader#sizeNextRead}). */
    void sizeNextRead(int readable, int headersEnd, int payloadLength, int totalLength) {
        payloads.sizeNextRead(readable, headersEnd, payloadLength, totalLength, payloadLength);
    }

    /** Fewer than the sizing octets of the next segment are here ({@link DirectPayloadReader#headerDue}). */
    void headerDue(ByteBuf in) {
        payloads.headerDue(in);
    }

    /**
     * A segment with {@code payloadLength} payload octets ({@code totalLength} in all) was received; {@code in} holds
     * what follows it.
     */
    void segmentDone(ByteBuf in, int payloadLength, int totalLength) {
        payloads.frameDone(in, payloadLength, totalLength);
    }

    /** Payload octets that came in an ordinary buffer go to the destination; whether there were any. */
    boolean copyIn(ByteBuf in) {
        return payloads.copyIn(in);
    }

    /** New octets in the destination; whether the payload is complete (then the trailer, if any, follows). */
    boolean payloadRead() {
        return payloads.payloadRead(trailerLength());
    }

    /**
     * The trailer behind a payload read into place: once it is in (at once without one), the segment, marked
     * placed, its content the destination and its CRC verdict set; null while the trailer is incomplete.
     */
    ViSegment trailer(ChannelHandlerContext ctx, ByteBuf in) {
        if (!payloads.readTrailer(ctx, in, trailerLength())) {
            return null;
        }
        ByteBuf content = view;
        view = null;
        ViSegment.Builder fields = header.trailer(trailer);
        header = null;
        content.readerIndex(0); // the driver advanced it past each read; its writer index is the payload's end
        return ViSegment.decodedPlaced(fields, content, trailer, !check.matched());
    }

    /** Stops reading into a destination (closing, removed) and releases it. */
    void abandon() {
        payloads.abandon();
        ByteBuf v = view;
        view = null;
        header = null;
        if (v != null) {
            v.release();
        }
    }

    private int trailerLength() {
        return trailer ? ViSegment.TRAILER_LENGTH : 0;
    }

    /**
     * The driver's view of the VI: headers in, destination out. VI/TCP hands whole segments up the pipeline as
     * {@link ViSegment}s, so the driver's whole-ULPDU and placed calls are not used: the decoder reports both.
     */
    private final class PlacementSink implements UlpduSink {
        @Override
        public int headerLength(int firstOctet) {
            // only sizes the reads that end at the next segment's headers: the sizing octets in front, then these
            return LONGEST_DATA_HEADERS - VitcpSegmentDecoder.SIZING_OCTETS;
        }

        @Override
        public ByteBuf payloadDestination(ByteBuf headers, int headerLength, int payloadLength) {
            ViPayloadPlacement p = placement;
            ByteBuf d = p != null ? p.payloadDestination(header.build(), payloadLength) : null;
            if (d == null) {
                return null;
            }
            if (d.writerIndex() != 0 || d.capacity() != payloadLength || d.maxCapacity() != payloadLength) {
                d.release();
                throw new IllegalStateException("destination " + d + " for " + payloadLength + " octets");
            }
            view = d.retain(); // the driver releases its reference when done; this one becomes the content
            return d;
        }

        @Override
        public void placed() {
            throw new UnsupportedOperationException("the decoder reports placed segments itself");
        }

        @Override
        public void ulpdu(ByteBuf ulpdu) {
            throw new UnsupportedOperationException("the decoder passes whole segments up the pipeline");
        }
    }
}
