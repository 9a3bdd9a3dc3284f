package dev.iwarp.vitcp;

import dev.iwarp.framing.DirectReadAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.ArrayList;
import java.util.List;

/**
 * Byte stream to {@link ViSegment}. Checks only what the wire format defines (draft-dicecco-vitcp-01 §3);
 * protocol state lives in the connection handlers. Payloads are retained slices of the input (no copy), or, once
 * the VI binds a {@link ViPayloadPlacement} ({@link #receiveWith}), a data segment's payload still arriving goes
 * straight to the destination the VI names once the segment's headers are in and checked ({@link VitcpPayloadReader},
 * read from the socket into it with {@link #readDirectlyWith}); that segment's content is then a view of the
 * destination ({@link ViSegment#placed()}), and its CRC is computed over what was read there.
 *
 * <p>Whether a trailer follows: CE segments iff they carry the CRC option; ConnectReject/ConnectNoMatch by
 * their Segment Length; every other type iff {@link #crcEnabled(boolean)} was set after establishment (§3.5).
 * A wrong CRC does not throw: the segment is emitted with {@link ViSegment#crcError()} set so the connection
 * handler applies §3.6 for its reliability level. Malformed input throws {@link VitcpProtocolException} once and
 * the decoder then discards everything (state {@link State#BAD_STREAM}).
 */
public class VitcpSegmentDecoder extends ByteToMessageDecoder {

    /** Decoder states. */
    enum State {
        /** Waiting for the fields that size the next segment: Version, Type, Segment Length (§3.2). */
        READ_HEADER,
        /** Size known and checked; waiting for the whole segment (or, for a payload read into place, its headers). */
        READ_SEGMENT,
        /** The VI named the payload's destination: the payload is read into it. */
        READ_PAYLOAD,
        /** The payload is in its destination: waiting for the trailer. */
        READ_TRAILER,
        BAD_STREAM
    }

    /** Octets at the start of a segment that give its type and length (Version, Type/Flags, Segment Length). */
    static final int SIZING_OCTETS = 4;

    private final VitcpCrcMode crcMode;
    private final VitcpPayloadReader payloads;
    private boolean crcEnabled;
    private State state = State.READ_HEADER;
    private int totalLength;
    private int segmentLength;
    private boolean hasTrailer;
    /** Octets of the current segment's headers (VI Segment Header, RDMA Header), for a data-phase segment. */
    private int headersLength;

    public VitcpSegmentDecoder(VitcpCrcMode crcMode) {
        this.crcMode = crcMode;
        this.payloads = new VitcpPayloadReader(crcMode);
    }

    /** Switches trailer CRCs on for data-phase segments (both CE frames carried the CRC option, §3.6). */
    public void crcEnabled(boolean enabled) {
        this.crcEnabled = enabled;
    }

    public boolean crcEnabled() {
        return crcEnabled;
    }

    public VitcpCrcMode crcMode() {
        return crcMode;
    }

    /**
     * From now on a data segment's payload of which enough is still due once its headers are in goes to the
     * destination {@code placement} names (null: every segment is received whole). On the event loop.
     */
    public void receiveWith(ViPayloadPlacement placement) {
        payloads.receiveWith(placement);
    }

    /**
     * Socket reads go straight into the payload destinations through {@code allocator}, the channel's receive-buffer
     * allocator (null: never; the payload octets are copied there from the buffers received). Only when every
     * handler in front of the decoder passes the socket's octets on unchanged. On the event loop.
     */
    public void readDirectlyWith(DirectReadAllocator allocator) {
        payloads.readDirectlyWith(allocator);
    }

    /**
     * Whether octets of a segment not yet complete are held after the last read was decoded (a read can complete one
     * segment and begin the next), in the cumulation or in a payload's destination. On the event loop.
     */
    public boolean holdsIncompleteSegment() {
        return state != State.BAD_STREAM && (actualReadableBytes() > 0 || payloads.reading());
    }

    State state() {
        return state;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (payloads.isDestination(msg)) { // a socket read made straight into a payload's destination
            try {
                if (state == State.READ_PAYLOAD && payloads.payloadRead()) {
                    state = State.READ_TRAILER;
                    ViSegment s = payloads.trailer(ctx, internalBuffer()); // complete at once without a trailer
                    if (s != null) {
                        state = State.READ_HEADER;
                        payloads.segmentDone(internalBuffer(), s.content().readableBytes(), totalLength);
                        ctx.fireChannelRead(s);
                    }
                }
            } finally {
                ((ByteBuf) msg).release();
            }
            return;
        }
        super.channelRead(ctx, msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        try {
            super.channelInactive(ctx);
        } finally {
            stopPlacing();
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        stopPlacing();
    }

    /** A payload cut short by the end of the stream or the decoder's removal: released, nothing more delivered. */
    private void stopPlacing() {
        if (payloads.reading()) {
            payloads.abandon();
            state = State.BAD_STREAM;
        }
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        for (;;) {
            switch (state) {
                case READ_HEADER:
                    if (in.readableBytes() < SIZING_OCTETS) {
                        payloads.headerDue(in); // shortly after a large segment the next read takes its headers
                        return;
                    }
                    try {
                        readFixedHeader(in);
                    } catch (VitcpProtocolException e) {
                        fail(in);
                        throw e;
                    }
                    payloads.newSegment();
                    state = State.READ_SEGMENT;
                    break;
                case READ_SEGMENT:
                    if (in.readableBytes() < totalLength) {
                        if (headersLength == 0) {
                            return;
                        }
                        int payloadLength = segmentLength - headersLength;
                        if (payloads.mayBegin(in.readableBytes(), headersLength, payloadLength)
                                && payloads.begin(in, header(in, in.readerIndex()), headersLength, payloadLength,
                                hasTrailer)) {
                            state = State.READ_PAYLOAD;
                            break;
                        }
                        payloads.sizeNextRead(in.readableBytes(), headersLength, payloadLength, totalLength);
                        return;
                    }
                    ViSegment s;
                    try {
                        s = readSegment(in);
                    } catch (VitcpProtocolException e) {
                        fail(in);
                        throw e;
                    }
                    if (s == null) {
                        return; // a CE segment whose trailer has not arrived yet
                    }
                    state = State.READ_HEADER;
                    out.add(s);
                    payloads.segmentDone(in, s.content().readableBytes(), totalLength);
                    return;
                case READ_PAYLOAD:
                    // octets that came in an ordinary buffer (a read begun before the destination was known)
                    if (!payloads.copyIn(in)) {
                        return;
                    }
                    if (payloads.payloadRead()) {
                        state = State.READ_TRAILER;
                    }
                    break;
                case READ_TRAILER: {
                    ViSegment placed = payloads.trailer(ctx, in);
                    if (placed == null) {
                        return;
                    }
                    state = State.READ_HEADER;
                    out.add(placed);
                    payloads.segmentDone(in, placed.content().readableBytes(), totalLength);
                    return;
                }
                case BAD_STREAM:
                    in.skipBytes(in.readableBytes());
                    return;
                default:
                    throw new IllegalStateException(state.name());
            }
        }
    }

    private void fail(ByteBuf in) {
        state = State.BAD_STREAM;
        in.skipBytes(in.readableBytes());
    }

    private void readFixedHeader(ByteBuf in) {
        int i = in.readerIndex();
        int version = in.getUnsignedByte(i);
        if (version != ViSegment.VERSION_1) {
            // draft-dicecco-vitcp-01 §3.2 "Version": this document describes version one
            throw new VitcpProtocolException(VitcpProtocolException.Violation.UNSUPPORTED_VERSION,
                    "peer sent VI/TCP version " + version);
        }
        int typeCode = in.getUnsignedByte(i + 1) & ViSegment.TYPE_MASK;
        ViSegmentType type = ViSegmentType.valueOf(typeCode);
        if (type == null) {
            throw new VitcpProtocolException(VitcpProtocolException.Violation.UNKNOWN_TYPE,
                    "peer sent segment type " + typeCode);
        }
        segmentLength = in.getUnsignedShort(i + 2);
        int min = ViSegment.HEADER_LENGTH + (type.carriesRdmaHeader() ? ViRdmaHeader.LENGTH : 0)
                + (type.carriesCeHeader() ? ViCeHeader.FIXED_LENGTH : 0);
        boolean ok;
        if (type.carriesPayload() || type.carriesCeHeader()) {
            ok = segmentLength >= min;
        } else if (type.optionalTrailer()) {
            // draft-dicecco-vitcp-01 §3.6: no payload, so the Segment Length tells whether a CRC is included
            ok = segmentLength == min || segmentLength == min + ViSegment.TRAILER_LENGTH;
        } else {
            ok = segmentLength == min;
        }
        if (!ok) {
            throw new VitcpProtocolException(VitcpProtocolException.Violation.BAD_SEGMENT_LENGTH,
                    "peer sent " + type + " with Segment Length " + segmentLength);
        }
        if (type.carriesCeHeader()) {
            // the trailer is known only after parsing the options; defer until the whole Segment Length is in
            hasTrailer = false;
            totalLength = segmentLength;
        } else if (type.optionalTrailer()) {
            hasTrailer = segmentLength > min;
            totalLength = segmentLength;
        } else {
            hasTrailer = crcEnabled;
            // draft-dicecco-vitcp-01 §3.2: the total length exceeds Segment Length by the trailer
            totalLength = segmentLength + (hasTrailer ? ViSegment.TRAILER_LENGTH : 0);
        }
        // a data segment's payload may be read into place once these are in (the only checks left on the segment
        // itself, Data Offset's, concern the types without payload)
        headersLength = type.carriesPayload() ? min : 0;
    }

    private ViSegment readSegment(ByteBuf in) {
        int start = in.readerIndex();
        ViSegment.Builder b = header(in, start);
        ViSegmentType type = ViSegmentType.valueOf(in.getUnsignedByte(start + 1) & ViSegment.TYPE_MASK);
        if (!type.multiSegment() && in.getInt(start + 4) != 0) {
            // draft-dicecco-vitcp-01 §3.2 "Data Offset": all other messages consist of a single segment
            throw new VitcpProtocolException(VitcpProtocolException.Violation.BAD_DATA_OFFSET,
                    "peer sent " + type + " with Data Offset " + Integer.toUnsignedString(in.getInt(start + 4)));
        }
        int pos = start + ViSegment.HEADER_LENGTH + (type.carriesRdmaHeader() ? ViRdmaHeader.LENGTH : 0);
        int payloadEnd = start + segmentLength;
        if (type.carriesCeHeader()) {
            ViCeHeader ce = readCeHeader(in, pos, payloadEnd);
            b.ceHeader(ce);
            pos = payloadEnd;
            if (ce.crcOption()) {
                // draft-dicecco-vitcp-01 §3.5: CE segments carry a trailer iff they carry the CRC option
                hasTrailer = true;
                totalLength = segmentLength + ViSegment.TRAILER_LENGTH;
                if (in.readableBytes() < totalLength) {
                    return null; // wait for the trailer; the CE header is parsed again then (rare, small)
                }
            }
        }
        if (type.optionalTrailer()) {
            payloadEnd = start + (hasTrailer ? segmentLength - ViSegment.TRAILER_LENGTH : segmentLength);
        }
        boolean crcError = false;
        if (hasTrailer) {
            int covered = payloadEnd - start;
            int expected = VitcpCrc.compute(crcMode, in, start, covered);
            crcError = expected != VitcpCrc.getCrc(crcMode, in, payloadEnd);
        }
        ByteBuf payload = pos < payloadEnd ? in.retainedSlice(pos, payloadEnd - pos)
                : io.netty.buffer.Unpooled.EMPTY_BUFFER;
        in.readerIndex(start + totalLength);
        return ViSegment.decoded(b.trailer(hasTrailer), payload, hasTrailer, crcError);
    }

    /** The VI Segment Header's fields (§3.2) and the RDMA Header (§3.4) when the type has one, at {@code start}. */
    private static ViSegment.Builder header(ByteBuf in, int start) {
        int typeFlags = in.getUnsignedByte(start + 1);
        ViSegmentType type = ViSegmentType.valueOf(typeFlags & ViSegment.TYPE_MASK);
        ViSegment.Builder b = ViSegment.builder(type)
                .version(in.getUnsignedByte(start))
                .endOfMessage((typeFlags & ViSegment.FLAG_EOM) != 0)
                .immediateDataValid((typeFlags & ViSegment.FLAG_IMMEDIATE_DATA_VALID) != 0)
                .transmitError((typeFlags & ViSegment.FLAG_TRANSMIT_ERROR) != 0)
                .dataOffset(in.getInt(start + 4))
                .immediateData(in.getInt(start + 8))
                .messageNumber(in.getInt(start + 12))
                .messageAck(in.getInt(start + 16))
                .rxDescriptorsPosted(in.getUnsignedShort(start + 20))
                .remoteErrorCode(in.getUnsignedShort(start + 22));
        if (type.carriesRdmaHeader()) {
            int pos = start + ViSegment.HEADER_LENGTH;
            b.rdmaHeader(new ViRdmaHeader(in.getLong(pos), in.getInt(pos + 8), in.getInt(pos + 12)));
        }
        return b;
    }

    static ViCeHeader readCeHeader(ByteBuf in, int pos, int end) {
        // draft-dicecco-vitcp-01 §3.3 field layout
        int attributes = in.getUnsignedShort(pos);
        int callingLength = in.getUnsignedShort(pos + 2);
        long mtu = in.getUnsignedInt(pos + 4);
        int readWindow = in.getUnsignedShort(pos + 72);
        int calledLength = in.getUnsignedShort(pos + 74);
        if (callingLength > ViCeHeader.MAX_DISCRIMINATOR_LENGTH || calledLength > ViCeHeader.MAX_DISCRIMINATOR_LENGTH) {
            // draft-dicecco-vitcp-01 §3.3: the 64 byte fields set the maximum discriminator length
            throw new VitcpProtocolException(VitcpProtocolException.Violation.BAD_CE_HEADER,
                    "peer sent discriminator lengths " + callingLength + "/" + calledLength + " (max 64)");
        }
        byte[] calling = new byte[callingLength];
        in.getBytes(pos + 8, calling);
        byte[] called = new byte[calledLength];
        in.getBytes(pos + 76, called);
        List<ViCeOption> options = new ArrayList<>(2);
        boolean eol = false;
        int p = pos + ViCeHeader.FIXED_LENGTH;
        // draft-dicecco-vitcp-01 §3.3 "Options": terminated by the end of the segment or End of Option List
        while (p < end) {
            if (end - p < 2) {
                throw new VitcpProtocolException(VitcpProtocolException.Violation.BAD_OPTION,
                        "peer sent a truncated option type at CE offset " + (p - pos));
            }
            int type = in.getUnsignedShort(p);
            if (type == ViCeOption.END_OF_OPTION_LIST) {
                eol = true;
                // anything after End of Option List within the segment is not an option; ignore it
                break;
            }
            if (end - p < 4) {
                throw new VitcpProtocolException(VitcpProtocolException.Violation.BAD_OPTION,
                        "peer sent a truncated option " + type);
            }
            int length = in.getUnsignedShort(p + 2);
            if (length < 4 || length > end - p) {
                throw new VitcpProtocolException(VitcpProtocolException.Violation.BAD_OPTION,
                        "peer sent option " + type + " with length " + length + ", " + (end - p) + " octets left");
            }
            // unknown options are kept but ignored by every consumer (§3.3 "A receiver MUST ignore")
            options.add(new ViCeOption(type, length));
            p += length;
        }
        return new ViCeHeader(attributes, mtu, calling, readWindow, called, options, eol);
    }
}
