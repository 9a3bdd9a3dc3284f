package dev.iwarp.ift;

import dev.iwarp.framing.Crc32c;
import dev.iwarp.framing.DuplexByteToMessageDecoder;
import dev.iwarp.framing.PeerAddress;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.EncoderException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * IFT framing (IFT draft §5.1): ULPDU ({@link ByteBuf}: one DDP segment, header and payload) to frame
 * and back.
 *
 * <pre>
 *  header_size(16) payload_size(16) receiver's VTag(16) | DDP header | [header CRC] | DDP payload | [payload CRC]
 * </pre>
 *
 * Sizes and VTag big-endian; each CRC32C least-significant octet first; no padding, no markers. The
 * header CRC covers octets 0 .. 6+header_size-1 (sizes, VTag, DDP header), the payload CRC the payload.
 * Which CRC fields a frame has is the <em>sender's</em> choice (its HC/PC); a present field is always
 * consumed, and checked unless we announced IH/IP.
 *
 * <p><b>Inbound</b>: a byte-stream decoder with an explicit state per frame part; checks in the order
 * size limits (F1, as soon as 6 octets are in), header CRC (F2), VTag (F3), header_size against the DDP
 * header (F5) — all before the payload has to be there — then payload CRC (F4). Each frame yields one
 * ULPDU, DDP header followed by payload, as a retained slice of the received octets (a composite of two
 * slices when a header CRC sits between them): no copy. The receiver owns and releases it. After an
 * error ({@link IftFramingException}, one log line) nothing more is delivered; the framer does not close
 * (RDMAP sends its Terminate, F1-F5, then closes). A FIN or RST inside a frame is F6.
 *
 * <p><b>Outbound</b>: {@link #write} takes a ULPDU (and ownership of it) and writes the frame as up to
 * three buffers: a small head (prefix, a copy of the 14/18-octet DDP header, header CRC), the ULPDU
 * itself advanced past its header (the payload, never copied), and a 4-octet payload CRC. IFT holds
 * nothing back: {@link #isTxHeld()} is always false (no MPA-style rule 4; node A parses frames right
 * after phase 1).
 */
public class IftFramer extends DuplexByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(IftFramer.class);

    /** header_size, payload_size, receiver's VTag. */
    public static final int PREFIX_LENGTH = 6;
    /** Octets of a CRC field. */
    public static final int CRC_LENGTH = 4;

    private enum State {
        /** Waiting for the 6-octet prefix of the next frame. */
        PREFIX,
        /** Sizes known and within limits; waiting for the DDP header and its CRC field. */
        HEADER,
        /** Header validated; waiting for the payload and its CRC field. */
        PAYLOAD,
        /** An error was reported; nothing more is delivered. */
        FAILED
    }

    private final int txVTag;
    private final int rxVTag;
    private final boolean txHeaderCrc;
    private final boolean txPayloadCrc;
    private final boolean rxHeaderCrcPresent;
    private final boolean rxPayloadCrcPresent;
    private final boolean rxHeaderCrcChecked;
    private final boolean rxPayloadCrcChecked;
    private final int maxHeaderSize;
    private final int maxPayloadSize;
    private final int mulpdu;
    private final IftHeaderLength headerLength;
    private final CRC32C rxCrc = new CRC32C();
    private final CRC32C txCrc = new CRC32C();
    /** Prefix and DDP header of the frame being sent: CRC'd and copied from here, no buffer views. */
    private byte[] scratch = new byte[PREFIX_LENGTH + 18];

    private State state = State.PREFIX;
    private int headerSize;
    private int payloadSize;
    private int frameVTag;
    private int headerWire;
    private int frameWire;
    private long framesReceived;
    private ChannelHandlerContext ctx;
    private boolean closing;

    /** A framer for what an {@link IftAdaptionHandler} negotiated. */
    public IftFramer(IftParameters p) {
        this.txVTag = p.peerVTag();
        this.rxVTag = p.localVTag();
        this.txHeaderCrc = p.txHeaderCrc();
        this.txPayloadCrc = p.txPayloadCrc();
        this.rxHeaderCrcPresent = p.rxHeaderCrcPresent();
        this.rxPayloadCrcPresent = p.rxPayloadCrcPresent();
        this.rxHeaderCrcChecked = p.rxHeaderCrcChecked();
        this.rxPayloadCrcChecked = p.rxPayloadCrcChecked();
        this.maxHeaderSize = p.maxHeaderSize();
        this.maxPayloadSize = p.maxPayloadSize();
        this.mulpdu = p.mulpdu();
        this.headerLength = p.headerLength();
    }

    /** MULPDU: the largest ULPDU (DDP header + payload) DDP should hand this framer. */
    public int mulpdu() {
        return mulpdu;
    }

    /** Always false: IFT has no rule that holds frames back (a Terminate can always be sent). */
    public boolean isTxHeld() {
        return false;
    }

    /** Octets of a frame with these sizes and CRC fields. */
    public static int frameLength(int headerSize, int payloadSize, boolean headerCrc, boolean payloadCrc) {
        return PREFIX_LENGTH + headerSize + (headerCrc ? CRC_LENGTH : 0) + payloadSize + (payloadCrc ? CRC_LENGTH : 0);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        super.handlerAdded(ctx);
    }

    /**
     * Graceful close: flushes the frames written so far, then closes the connection once they are on
     * the wire: a FIN after the last complete frame, which the peer reads as a clean end. Writes an
     * empty buffer straight to the handler below, so no frame is produced. Idempotent; from another
     * thread it is handed to the channel's event loop.
     */
    public void closeAfterFlush() {
        closeAfterFlush(ChannelFutureListener.CLOSE);
    }

    /**
     * As {@link #closeAfterFlush()}, but runs {@code then} instead of closing once the frames written so far
     * are on the wire (e.g. to close only the output and drain the input first, so that the kernel does not
     * answer the peer's unread octets with a reset that can destroy a Terminate). From then on inbound octets
     * are discarded.
     */
    public void closeAfterFlush(ChannelFutureListener then) {
        if (ctx == null) {
            throw new IllegalStateException("not added to a pipeline yet");
        }
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> closeAfterFlush(then));
            return;
        }
        if (closing) {
            return;
        }
        closing = true;
        ctx.flush();
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(then);
    }

    // ---------------------------------------------------------------- inbound

    /**
     * Whether octets of a frame not yet complete are held after the last read was decoded (a read can complete one
     * frame and begin the next). On the event loop.
     */
    public boolean holdsIncompleteFrame() {
        return state != State.FAILED && actualReadableBytes() > 0;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (closing) { // nothing is delivered once the stream closes (RFC 5040 §5.4 / §6.2.1)
            in.skipBytes(in.readableBytes());
            return;
        }
        for (;;) {
            switch (state) {
                case PREFIX: {
                    if (in.readableBytes() < PREFIX_LENGTH) {
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
                    state = State.HEADER;
                    break;
                }
                case HEADER:
                    if (in.readableBytes() < headerWire) {
                        return;
                    }
                    checkHeader(ctx, in);
                    state = State.PAYLOAD;
                    break;
                case PAYLOAD: {
                    if (in.readableBytes() < frameWire) {
                        return;
                    }
                    out.add(readFrame(ctx, in));
                    state = State.PREFIX;
                    // one ULPDU per call: it is passed on before the next is sliced
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

    private ByteBuf readFrame(ChannelHandlerContext ctx, ByteBuf in) {
        int at = in.readerIndex();
        int payloadAt = at + headerWire;
        if (rxPayloadCrcChecked) {
            rxCrc.reset();
            Crc32c.update(rxCrc, in, payloadAt, payloadSize);
            int computed = (int) rxCrc.getValue();
            int received = in.getIntLE(payloadAt + payloadSize);
            if (computed != received) {
                throw fail(ctx, in, IftError.PAYLOAD_CRC, String.format(
                        "frame %s (payload_size %d): payload CRC octets %s, expected %s (CRC32C 0x%08X)%s", frameNo(),
                        payloadSize, wire(received), wire(computed), computed, Integer.reverseBytes(received) == computed
                                ? " (the peer wrote it most-significant octet first)" : ""));
            }
        }
        ByteBuf ulpdu;
        if (!rxHeaderCrcPresent) {
            ulpdu = in.retainedSlice(at + PREFIX_LENGTH, headerSize + payloadSize);
        } else if (payloadSize == 0) {
            ulpdu = in.retainedSlice(at + PREFIX_LENGTH, headerSize);
        } else {
            ulpdu = ctx.alloc().compositeBuffer(2).addComponents(true,
                    in.retainedSlice(at + PREFIX_LENGTH, headerSize), in.retainedSlice(payloadAt, payloadSize));
        }
        if (LOG.isTraceEnabled()) {
            LOG.trace("{} rx IFT frame #{} header_size {} payload_size {}", ctx.channel(), framesReceived + 1,
                    headerSize, payloadSize);
        }
        in.skipBytes(frameWire);
        framesReceived++;
        return ulpdu;
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
        in.skipBytes(in.readableBytes());
        IftFramingException e = new IftFramingException(error, what);
        LOG.warn("peer {}: {}; no further frames are delivered", PeerAddress.of(ctx),
                e.getMessage());
        return e;
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        // ByteToMessageDecoder has decoded every complete frame already
        if (closing || state == State.FAILED || !in.isReadable()) {
            in.skipBytes(in.readableBytes());
            return;
        }
        String have = state == State.PREFIX ? in.readableBytes() + " of its 6 header octets"
                : in.readableBytes() + " of its " + frameWire + " octets";
        IftFramingException e = fail(ctx, in, IftError.CONNECTION_LOST, "the peer closed the connection inside frame "
                + frameNo() + " (" + have + " received)");
        // the frames before it first, then the error, then (in ByteToMessageDecoder) channelInactive
        for (Object o : out) {
            ctx.fireChannelRead(o);
        }
        out.clear();
        ctx.fireExceptionCaught(e);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException && state != State.FAILED) {
            state = State.FAILED;
            IftFramingException e = new IftFramingException(IftError.CONNECTION_LOST, "connection lost after "
                    + framesReceived + " frames: " + cause.getMessage(), cause);
            LOG.info("peer {}: {}", PeerAddress.of(ctx), e.getMessage());
            ctx.fireExceptionCaught(e);
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    // ---------------------------------------------------------------- outbound

    /**
     * Sends {@code msg} as one frame when it is a non-empty {@link ByteBuf} (a ULPDU: DDP header then
     * payload; this method takes ownership and releases it). An empty buffer is no DDP segment and
     * passes on unchanged (Netty's flush-barrier idiom); anything else passes on unchanged too.
     */
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf) || !((ByteBuf) msg).isReadable()) {
            ctx.write(msg, promise);
            return;
        }
        ByteBuf ulpdu = (ByteBuf) msg;
        int length = ulpdu.readableBytes();
        int hs = headerLength.headerLength(ulpdu.getUnsignedByte(ulpdu.readerIndex()));
        int ps = length - hs;
        if (hs < 1 || hs > 0xFFFF || ps < 0 || ps > 0xFFFF) {
            ulpdu.release();
            // IFT draft §5.1: header_size and payload_size are 16-bit fields
            promise.setFailure(new EncoderException("ULPDU of " + length + " octets does not fit one IFT frame"
                    + " with a DDP header of " + hs + " octets (header and payload each 0..65535)"));
            return;
        }
        if (!ctx.channel().isActive()) {
            ulpdu.release();
            promise.setFailure(new ClosedChannelException());
            return;
        }
        int covered = PREFIX_LENGTH + hs;
        if (scratch.length < covered) {
            scratch = new byte[covered];
        }
        scratch[0] = (byte) (hs >>> 8);
        scratch[1] = (byte) hs;
        scratch[2] = (byte) (ps >>> 8);
        scratch[3] = (byte) ps;
        scratch[4] = (byte) (txVTag >>> 8);
        scratch[5] = (byte) txVTag;
        ulpdu.getBytes(ulpdu.readerIndex(), scratch, PREFIX_LENGTH, hs);
        ByteBufAllocator alloc = ctx.alloc();
        ByteBuf head = alloc.buffer(covered + (txHeaderCrc ? CRC_LENGTH : 0) + (ps == 0 && txPayloadCrc ? CRC_LENGTH : 0));
        head.writeBytes(scratch, 0, covered);
        if (txHeaderCrc) {
            txCrc.reset();
            txCrc.update(scratch, 0, covered);
            head.writeIntLE((int) txCrc.getValue());
        }
        if (LOG.isTraceEnabled()) {
            LOG.trace("{} tx IFT frame header_size {} payload_size {}", ctx.channel(), hs, ps);
        }
        if (ps == 0) {
            ulpdu.release();
            if (txPayloadCrc) {
                head.writeIntLE(0); // CRC32C of no octets; the field is present whenever PC=1
            }
            ctx.write(head, promise);
            return;
        }
        ctx.write(head, ctx.voidPromise());
        ulpdu.skipBytes(hs); // the payload goes out as the ULPDU itself: no slice, no copy
        if (!txPayloadCrc) {
            ctx.write(ulpdu, promise);
            return;
        }
        txCrc.reset();
        Crc32c.update(txCrc, ulpdu, ulpdu.readerIndex(), ps);
        int crc = (int) txCrc.getValue();
        ctx.write(ulpdu, ctx.voidPromise());
        ctx.write(alloc.buffer(CRC_LENGTH).writeIntLE(crc), promise);
    }
}
