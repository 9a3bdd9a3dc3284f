package dev.iwarp.ift;

import dev.iwarp.framing.Crc32c;
import dev.iwarp.framing.DirectPayloadReader;
import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.PeerAddress;
import dev.iwarp.framing.UlpduSink;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.zip.CRC32C;

import static dev.iwarp.ift.IftFramer.CRC_LENGTH;
import static dev.iwarp.ift.IftFramer.PREFIX_LENGTH;

/**
 * The inbound half of {@link IftFramer}: a pure byte-stream frame decoder (it never depends on how TCP
 * segmented the stream) with an explicit state per frame part. Checks in the order size limits (F1, as soon
 * as 6 octets are in), header CRC (F2), VTag (F3), header_size against the DDP header (F5), all before the
 * payload has to be there, then payload CRC (F4). After an error nothing more is delivered.
 *
 * <p>Each frame yields one ULPDU: up the pipeline as a retained slice of the received octets, or, once a sink is
 * bound ({@link #receiveWith}), lent to it; a large payload still arriving then goes header first to the sink and
 * into the destination it names ({@link DirectPayloadReader}, with the payload CRC as {@link IftPayloadCheck}).
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
final class IftFrameReader {
    /** The framer's logger: both halves log as {@code IftFramer}. */
    private static final Logger LOG = LoggerFactory.getLogger(IftFramer.class);

    private enum State {
        /** Waiting for the 6-octet prefix of the next frame. */
        PREFIX,
        /** Sizes known and within limits; waiting for the DDP header and its CRC field. */
        HEADER,
        /** Header validated; waiting for the payload and its CRC field. */
        PAYLOAD,
        /** The header went to the sink, which named a destination: the payload is read into it. */
        READ_PAYLOAD,
        /** The payload is in its destination: waiting for its CRC field. */
        READ_TRAILER,
        /** An error was reported; nothing more is delivered. */
        FAILED
    }

    private final int rxVTag;
    /** Whether each frame is traced: asked once, when the connection's framer is made (not per frame). */
    private final boolean trace = LOG.isTraceEnabled();
    private final boolean rxHeaderCrcPresent;
    private final boolean rxPayloadCrcPresent;
    private final boolean rxHeaderCrcChecked;
    private final boolean rxPayloadCrcChecked;
    private final int maxHeaderSize;
    private final int maxPayloadSize;
    private final IftHeaderLength headerLength;
    private final CRC32C rxCrc = new CRC32C();

    private State state = State.PREFIX;
    private int headerSize;
    private int payloadSize;
    private int frameVTag;
    private int headerWire;
    private int frameWire;
    private long framesReceived;

    long framesReceived() {
        return framesReceived;
    }
    /** Large payloads read into their destination, and the sink ULPDUs go to once bound. */
    private final DirectPayloadReader payloads;

    IftFrameReader(IftParameters p) {
        this.rxVTag = p.localVTag();
        this.rxHeaderCrcPresent = p.rxHeaderCrcPresent();
        this.rxPayloadCrcPresent = p.rxPayloadCrcPresent();
        this.rxHeaderCrcChecked = p.rxHeaderCrcChecked();
        this.rxPayloadCrcChecked = p.rxPayloadCrcChecked();
        this.maxHeaderSize = p.maxHeaderSize();
        this.maxPayloadSize = p.maxPayloadSize();
        this.headerLength = p.headerLength();
        this.payloads = new DirectPayloadReader(new IftPayloadCheck(this, rxPayloadCrcChecked), IftFramer.DIRECT_READ_MIN, PREFIX_LENGTH,
                rxHeaderCrcPresent ? CRC_LENGTH : 0);
    }

    /** From now on ULPDUs go to {@code s}. */
    void receiveWith(UlpduSink s) {
        payloads.receiveWith(s);
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
     * The payload octets a socket read just placed in the destination (the caller releases the read's reference);
     * {@code in} holds what was received in ordinary buffers and not yet decoded. A payload without a CRC field
     * behind it is complete right away: the sink is told now, not once the next frame arrives.
     */
    void destinationRead(ChannelHandlerContext ctx, ByteBuf in) {
        if (state == State.READ_PAYLOAD) {
            payloadRead();
            if (state == State.READ_TRAILER && !rxPayloadCrcPresent) {
                placed(ctx, in);
            }
        }
    }

    private void payloadRead() {
        if (payloads.payloadRead(rxPayloadCrcPresent ? CRC_LENGTH : 0)) {
            state = State.READ_TRAILER;
        }
    }

    /** Stops reading into a destination (closing, removed, failed) and releases it. */
    void abandon() {
        if (payloads.abandon()) {
            state = State.FAILED; // the rest of this frame has nowhere to go: nothing more is delivered
        }
    }

    /** Whether a frame's payload is being read into its destination (its octets are not in the cumulation). */
    boolean readingPayload() {
        return state == State.READ_PAYLOAD || state == State.READ_TRAILER;
    }

    /** Whether an error was reported: nothing more is delivered. */
    boolean failed() {
        return state == State.FAILED;
    }

    /**
     * Decodes at most one frame from {@code in} into {@code out}: one ULPDU is passed on before the next is
     * sliced.
     *
     * @throws IftFramingException F1-F5
     */
    void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        for (;;) {
            switch (state) {
                case PREFIX: {
                    if (in.readableBytes() < PREFIX_LENGTH) {
                        payloads.headerDue(in);
                        return;
                    }
                    int at = in.readerIndex();
                    headerSize = in.getUnsignedShort(at);
                    payloadSize = in.getUnsignedShort(at + 2);
                    frameVTag = in.getUnsignedShort(at + 4);
                    if (headerSize == 0 || headerSize > maxHeaderSize) {
                        throw fail(ctx, in, IftError.SIZE_LIMIT, "header_size " + headerSize + " (accepted 1.."
                                + maxHeaderSize + ")");
                    }
                    if (payloadSize > maxPayloadSize) {
                        throw fail(ctx, in, IftError.SIZE_LIMIT, "payload_size " + payloadSize + " exceeds the maximum of "
                                + maxPayloadSize);
                    }
                    headerWire = PREFIX_LENGTH + headerSize + (rxHeaderCrcPresent ? CRC_LENGTH : 0);
                    frameWire = headerWire + payloadSize + (rxPayloadCrcPresent ? CRC_LENGTH : 0);
                    payloads.newFrame();
                    state = State.HEADER;
                    break;
                }
                case HEADER:
                    if (in.readableBytes() < headerWire) {
                        payloads.sizeNextRead(in.readableBytes(), headerWire, payloadSize, frameWire, payloadSize);
                        return;
                    }
                    checkHeader(ctx, in);
                    state = State.PAYLOAD;
                    break;
                case PAYLOAD: {
                    if (in.readableBytes() < frameWire) {
                        UlpduSink sink = payloads.sink();
                        if (sink != null && !payloads.asked()
                                && payloads.begin(in, PREFIX_LENGTH, headerSize, headerWire, payloadSize)) {
                            state = State.READ_PAYLOAD;
                            break;
                        }
                        payloads.sizeNextRead(in.readableBytes(), headerWire, payloadSize, frameWire, payloadSize);
                        return;
                    }
                    UlpduSink sink = payloads.sink();
                    if (sink == null) {
                        out.add(readFrame(ctx, in));
                        state = State.PREFIX;
                        // one ULPDU per call: it is passed on before the next is sliced
                        return;
                    }
                    state = State.PREFIX;
                    sinkFrame(ctx, in, sink);
                    payloads.frameDone(in, payloadSize, frameWire);
                    return;
                }
                case READ_PAYLOAD:
                    // octets that came in an ordinary buffer (a read begun before the destination was known)
                    if (!payloads.copyIn(in)) {
                        return;
                    }
                    payloadRead();
                    break;
                case READ_TRAILER: {
                    if (!payloads.readTrailer(ctx, in, rxPayloadCrcPresent ? CRC_LENGTH : 0)) {
                        return;
                    }
                    placed(ctx, in);
                    return;
                }
                case FAILED:
                    in.skipBytes(in.readableBytes());
                    return;
                default:
                    throw new IllegalStateException(state.name());
            }
        }
    }

    /** Order of IFT draft §4.2/§5.1 checks as decided: header CRC, VTag, header_size against the T bit. */
    private void checkHeader(ChannelHandlerContext ctx, ByteBuf in) {
        int at = in.readerIndex();
        int covered = PREFIX_LENGTH + headerSize;
        if (rxHeaderCrcChecked) {
            rxCrc.reset();
            Crc32c.update(rxCrc, in, at, covered);
            int computed = (int) rxCrc.getValue();
            int received = in.getIntLE(at + covered);
            if (computed != received) {
                throw fail(ctx, in, IftError.HEADER_CRC, String.format("frame %s: header CRC octets %s, expected %s (CRC32C 0x%08X)%s",
                        frameNo(), wire(received), wire(computed), computed, crcHint(in, at, received, computed)));
            }
        }
        if (frameVTag != rxVTag) {
            throw fail(ctx, in, IftError.VTAG_MISMATCH, String.format("frame %s carries VTag 0x%04X, ours is 0x%04X",
                    frameNo(), frameVTag, rxVTag));
        }
        int first = in.getUnsignedByte(at + PREFIX_LENGTH);
        int expected = headerLength.headerLength(first);
        if (expected != headerSize) {
            throw fail(ctx, in, IftError.HEADER_SIZE, String.format(
                    "frame %s: header_size %d, but its DDP header (first octet 0x%02X, T=%d) is %d octets",
                    frameNo(), headerSize, first, first >>> 7, expected));
        }
    }

    /** Diagnosis of a header CRC mismatch: the two ways another reading of the draft would differ. */
    private static String crcHint(ByteBuf in, int at, int received, int computed) {
        if (Integer.reverseBytes(received) == computed) {
            return " (the peer wrote it most-significant octet first)";
        }
        CRC32C c = new CRC32C();
        Crc32c.update(c, in, at, 4);
        Crc32c.update(c, in, at + PREFIX_LENGTH, in.getUnsignedShort(at));
        return (int) c.getValue() == received ? " (the peer's CRC leaves the VTag out)" : "";
    }

    /** The payload is in its destination and its CRC matched (or has none): the sink is told. */
    private void placed(ChannelHandlerContext ctx, ByteBuf in) {
        payloads.abandon();
        passed(ctx);
        state = State.PREFIX;
        payloads.frameDone(in, payloadSize, frameWire);
        payloads.sink().placed();
    }

    /** A whole frame, checked, lent to the sink: without a header CRC field as {@code in} itself, else as a composite. */
    private void sinkFrame(ChannelHandlerContext ctx, ByteBuf in, UlpduSink sink) {
        if (rxHeaderCrcPresent && payloadSize > 0) {
            ByteBuf ulpdu = readFrame(ctx, in);
            try {
                sink.ulpdu(ulpdu);
            } finally {
                ulpdu.release();
            }
            return;
        }
        int at = in.readerIndex();
        int end = in.writerIndex();
        checkPayload(ctx, in, at + headerWire);
        passed(ctx);
        in.setIndex(at + PREFIX_LENGTH, at + PREFIX_LENGTH + headerSize + payloadSize);
        try {
            sink.ulpdu(in);
        } finally {
            in.setIndex(at + frameWire, end);
        }
    }

    private void checkPayload(ChannelHandlerContext ctx, ByteBuf in, int payloadAt) {
        if (rxPayloadCrcChecked) {
            rxCrc.reset();
            Crc32c.update(rxCrc, in, payloadAt, payloadSize);
            checkPayloadCrc(ctx, in, (int) rxCrc.getValue(), in.getIntLE(payloadAt + payloadSize));
        }
    }

    private ByteBuf readFrame(ChannelHandlerContext ctx, ByteBuf in) {
        int at = in.readerIndex();
        int payloadAt = at + headerWire;
        checkPayload(ctx, in, payloadAt);
        ByteBuf ulpdu;
        if (!rxHeaderCrcPresent) {
            ulpdu = in.retainedSlice(at + PREFIX_LENGTH, headerSize + payloadSize);
        } else if (payloadSize == 0) {
            ulpdu = in.retainedSlice(at + PREFIX_LENGTH, headerSize);
        } else {
            ulpdu = ctx.alloc().compositeBuffer(2).addComponents(true,
                    in.retainedSlice(at + PREFIX_LENGTH, headerSize), in.retainedSlice(payloadAt, payloadSize));
        }
        in.skipBytes(frameWire);
        passed(ctx);
        return ulpdu;
    }

    /** F4 unless {@code computed} (over the payload) equals {@code received} (the frame's payload CRC field). */
    void checkPayloadCrc(ChannelHandlerContext ctx, ByteBuf in, int computed, int received) {
        if (computed != received) {
            throw fail(ctx, in, IftError.PAYLOAD_CRC, String.format(
                    "frame %s (payload_size %d): payload CRC octets %s, expected %s (CRC32C 0x%08X)%s", frameNo(),
                    payloadSize, wire(received), wire(computed), computed, Integer.reverseBytes(received) == computed
                            ? " (the peer wrote it most-significant octet first)" : ""));
        }
    }

    /** Counts the current frame as received. */
    private void passed(ChannelHandlerContext ctx) {
        if (trace) {
            LOG.trace("{} rx IFT frame #{} header_size {} payload_size {}", ctx.channel(), framesReceived + 1,
                    headerSize, payloadSize);
        }
        framesReceived++;
    }

    /** A CRC value as its four octets on the wire (least-significant first). */
    private static String wire(int crc) {
        return String.format("%02x %02x %02x %02x", crc & 0xFF, (crc >>> 8) & 0xFF, (crc >>> 16) & 0xFF, crc >>> 24);
    }

    private String frameNo() {
        return "#" + (framesReceived + 1);
    }

    private IftFramingException fail(ChannelHandlerContext ctx, ByteBuf in, IftError error, String what) {
        state = State.FAILED;
        payloads.abandon();
        in.skipBytes(in.readableBytes());
        IftFramingException e = new IftFramingException(error, what);
        LOG.warn("peer {}: {}; no further frames are delivered", PeerAddress.of(ctx),
                e.getMessage());
        return e;
    }

    /**
     * At the end of the stream, after every complete frame was decoded: F6 when {@code in} holds part of a
     * frame (the caller fires it after the frames before it), else null.
     */
    IftFramingException endOfStream(ChannelHandlerContext ctx, ByteBuf in) {
        if (state == State.FAILED || (!in.isReadable() && !readingPayload())) {
            in.skipBytes(in.readableBytes());
            return null;
        }
        String have = state == State.PREFIX ? in.readableBytes() + " of its 6 header octets"
                : readingPayload() ? "its payload read into place in part" : in.readableBytes() + " of its " + frameWire + " octets";
        return fail(ctx, in, IftError.CONNECTION_LOST, "the peer closed the connection inside frame "
                + frameNo() + " (" + have + " received)");
    }

    /** F6 for a transport error, once (null after an error was reported already). */
    IftFramingException connectionLost(ChannelHandlerContext ctx, IOException cause) {
        if (state == State.FAILED) {
            return null;
        }
        state = State.FAILED;
        payloads.abandon();
        IftFramingException e = new IftFramingException(IftError.CONNECTION_LOST, "connection lost after "
                + framesReceived + " frames: " + cause.getMessage(), cause);
        LOG.info("peer {}: {}", PeerAddress.of(ctx), e.getMessage());
        return e;
    }
}
