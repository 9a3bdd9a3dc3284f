package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import io.netty.handler.codec.EncoderException;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * MPA full operation (RFC 5044 §4-§6): ULPDU ({@link ByteBuf}) to FPDU and back.
 *
 * <pre>
 *  [marker]* ULPDU_Length(16, BE) | ULPDU | PAD 0..3 | [marker] | CRC32C (little-endian on the wire)
 * </pre>
 *
 * <p><b>Inbound</b>: a pure byte-stream decoder (it never depends on how TCP segmented the stream);
 * each FPDU yields one ULPDU buffer, a retained slice of the received bytes (a composite of slices
 * when markers sit inside it): no copies. The receiver owns and must release it. CRC and markers are
 * checked before anything is delivered; a mismatch raises {@link MpaException} code 2 or 3 and
 * nothing more is delivered on this half connection (RFC 5044 §8). MPA does not close the
 * connection itself then: the ULP (RDMAP) sends its Terminate and closes.
 *
 * <p><b>Outbound</b>: {@link #write} takes a ULPDU buffer (and ownership of it) and sends the FPDU
 * as a few writes: a small header buffer, the ULPDU itself (or retained slices of it, cut at marker
 * positions), and a small trailer with pad, any marker and the CRC. The payload is never copied. This
 * is why the framer is a {@link io.netty.handler.codec.ByteToMessageDecoder} plus a hand-written outbound side rather than a
 * {@code ByteToMessageCodec}, whose encoder would copy every payload into one output buffer.
 *
 * <p>As Responder the framer holds every outbound FPDU until one valid FPDU has been received
 * (RFC 5044 §7.1.2 rule 4), then sends them in order.
 *
 * <p>Markers occupy every 512th stream position counted from each direction's first octet after its
 * startup frame (RFC 5044 §4.3); the framer is created at exactly that point of both directions.
 */
public class MpaFramer extends MpaDuplexDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(MpaFramer.class);

    /** Marker interval (RFC 5044 §4.3). */
    public static final int MARKER_INTERVAL = 512;
    /** Octets of a marker. */
    public static final int MARKER_LENGTH = 4;
    /** Octets of the ULPDU_Length field. */
    public static final int LENGTH_FIELD = 2;
    /** Octets of the CRC field. */
    public static final int CRC_LENGTH = 4;
    /** Payloads up to this many octets are copied into their FPDU's one buffer (see writeSmallFpdu). */
    static final int SMALL_PAYLOAD = 1024;

    private enum State {
        /** Waiting for the (optional leading marker and) ULPDU_Length of the next FPDU. */
        READ_HEADER,
        /** ULPDU_Length known; waiting for the whole FPDU. */
        READ_FPDU,
        /** An error was reported; nothing more is delivered on this half connection (RFC 5044 §8). */
        FAILED
    }

    private final boolean crc;
    private final boolean markersTx;
    private final boolean markersRx;
    private final int maxUlpduLength;
    private int mulpdu;
    /** Whether {@link #mulpdu()} follows the connection's EMSS (none was configured). */
    private boolean followEmss;
    private int callsUntilEmssCheck;
    private final CRC32C rxCrc = new CRC32C();
    private final CRC32C txCrc = new CRC32C();
    /** CRC input over direct memory through one reused NIO view per direction (no view per FPDU). */
    private final Crc32cFeed rxFeed = new Crc32cFeed();
    private final Crc32cFeed txFeed = new Crc32cFeed();
    /** The framer's own octets (length, markers, pad) are CRC'd from here: no buffer views per FPDU. */
    private final byte[] scratch = new byte[MARKER_LENGTH + MARKER_LENGTH + CRC_LENGTH];
    /** CRC input for small pieces of a composite ULPDU (a DDP header is 14 or 18 octets). */
    private final byte[] pieceScratch = new byte[64];
    /**
     * An FPDU of a small payload (writeSmallFpdu): ULPDU_Length, a header that fits pieceScratch, payload, pad.
     * Taken at the first such FPDU: an idle connection does not pay for it.
     */
    private byte[] smallScratch;

    private State state = State.READ_HEADER;
    /** Octets received since this direction's SeqStart (mod 2^32; only mod 512 matters). */
    private int rxPos;
    /** Octets sent since this direction's SeqStart. */
    private int txPos;
    private int fpduLead;
    private int fpduUlpduLength;
    private int fpduWireLength;
    private long fpdusReceived;

    private boolean txHeld;
    private boolean flushWhileHeld;
    /** FPDUs held by rule 4; they count toward the channel's writability. */
    private PendingWriteQueue held;
    private ChannelHandlerContext ctx;
    private boolean closing;

    /** A framer for the parameters a {@link MpaStartupHandler} negotiated. */
    public MpaFramer(MpaParameters parameters) {
        this(parameters.crc(), parameters.markersTx(), parameters.markersRx(), parameters.maxUlpduLength(),
                parameters.mulpdu(), parameters.holdTxUntilFirstFpdu());
    }

    /**
     * A framer with explicit settings, for tests, benchmarks, and ULPs that run their own startup.
     *
     * @param crc              generate and check CRC32C (otherwise the CRC field is sent as 0, never checked)
     * @param markersTx        insert markers in what we send
     * @param markersRx        the peer inserts markers in what it sends
     * @param maxUlpduLength   largest ULPDU_Length accepted from the peer (128..65535)
     * @param mulpdu           MULPDU reported to DDP
     * @param holdTx           hold outbound FPDUs until a valid FPDU arrived (Responder, rule 4)
     */
    public MpaFramer(boolean crc, boolean markersTx, boolean markersRx, int maxUlpduLength, int mulpdu,
                     boolean holdTx) {
        if (maxUlpduLength < 0 || maxUlpduLength > 0xFFFF) {
            throw new IllegalArgumentException("maxUlpduLength must be 0..65535: " + maxUlpduLength);
        }
        this.crc = crc;
        this.markersTx = markersTx;
        this.markersRx = markersRx;
        this.maxUlpduLength = maxUlpduLength;
        this.mulpdu = mulpdu;
        this.txHeld = holdTx;
        setCumulator(FpduCumulator.INSTANCE);
    }

    /** Calls of {@link #mulpdu()} between two readings of the connection's EMSS. */
    static final int EMSS_CHECK_INTERVAL = 64;

    /**
     * MULPDU: the largest ULPDU DDP should hand this framer (RFC 5044 §4.5). After {@link #followEmss}
     * it tracks the connection's EMSS, re-read every {@value #EMSS_CHECK_INTERVAL} calls where the
     * transport exposes it (epoll's TCP_INFO): Linux starts a connection's MSS at half the peer's first
     * window (32768 on loopback, so a 64 KiB Write took three FPDUs) and raises it as the window grows.
     */
    public int mulpdu() {
        if (followEmss && --callsUntilEmssCheck < 0) {
            callsUntilEmssCheck = EMSS_CHECK_INTERVAL;
            int emss = ctx == null ? -1 : Emss.current(ctx.channel());
            if (emss > 0) {
                mulpdu = mulpdu(emss, markersTx);
            }
        }
        return mulpdu;
    }

    /** From now on {@link #mulpdu()} follows the EMSS (RFC 5044 §4.5: MULPDU derives from the current EMSS). */
    void followEmss() {
        followEmss = true;
    }

    /** Whether FPDUs carry a CRC32C in both directions (negotiated: either side asked, RFC 5044 §7.1.2). */
    public boolean crc() {
        return crc;
    }

    /** Whether we insert markers into what we send (RFC 5044 §5). */
    public boolean markersTx() {
        return markersTx;
    }

    /** Whether the peer inserts markers into what we receive (RFC 5044 §5). */
    public boolean markersRx() {
        return markersRx;
    }

    /** Whether outbound FPDUs are still held by rule 4. */
    public boolean isTxHeld() {
        return txHeld;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        super.handlerAdded(ctx);
    }

    /**
     * Graceful close: flushes the FPDUs written so far, then closes the connection once they are on
     * the wire, without producing an empty FPDU (RFC 5040 §6.2.1 over MPA: a FIN after the last
     * complete FPDU). FPDUs still held by rule 4 never leave. Call on the event loop; idempotent.
     */
    public void closeAfterFlush() {
        closeAfterFlush(ChannelFutureListener.CLOSE);
    }

    /**
     * As {@link #closeAfterFlush()}, but runs {@code then} instead of closing once the FPDUs written so far
     * are on the wire (e.g. to close only the output and drain the input first, so that the kernel does not
     * answer the peer's unread octets with a reset that can destroy a Terminate). From then on inbound octets
     * are discarded. Call on the event loop; idempotent.
     */
    public void closeAfterFlush(ChannelFutureListener then) {
        if (closing || ctx == null) {
            return;
        }
        closing = true;
        flush(ctx);
        // an empty buffer written below the framer completes after everything written before it
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(then);
    }

    /**
     * Octets an FPDU occupies on the wire when it starts {@code streamPos} octets after SeqStart:
     * length field, ULPDU, pad, the markers that fall inside it (including a leading one and one right
     * after the pad, RFC 5044 §4.3), and the CRC.
     */
    public static int wireLength(int streamPos, int ulpduLength, boolean markers) {
        int body = LENGTH_FIELD + ulpduLength;
        body += (-body) & 3;
        if (!markers) {
            return body + CRC_LENGTH;
        }
        int off = 0;
        int left = body;
        while (left > 0) {
            if (((streamPos + off) & (MARKER_INTERVAL - 1)) == 0) {
                off += MARKER_LENGTH;
            }
            int n = Math.min(left, MARKER_INTERVAL - ((streamPos + off) & (MARKER_INTERVAL - 1)));
            off += n;
            left -= n;
        }
        if (((streamPos + off) & (MARKER_INTERVAL - 1)) == 0) {
            off += MARKER_LENGTH; // a marker right after the PAD belongs to this FPDU (RFC 5044 §4.3)
        }
        return off + CRC_LENGTH;
    }

    /**
     * MULPDU for an EMSS (RFC 5044 §4.5), clamped to 128..64768:
     * {@code EMSS - (6 + (EMSS mod 4))}, with markers {@code EMSS - (6 + 4 * ceil(EMSS / 512) + (EMSS mod 4))}.
     */
    public static int mulpdu(int emss, boolean markers) {
        int m = emss - (6 + (emss % 4));
        if (markers) {
            m -= MARKER_LENGTH * ((emss + MARKER_INTERVAL - 1) / MARKER_INTERVAL);
        }
        return Math.max(MpaSettings.MIN_MULPDU, Math.min(MpaSettings.MAX_SEND_ULPDU, m));
    }

    // ---------------------------------------------------------------- inbound

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (closing) { // RFC 5040 §5.4 / §6.2.1: nothing is delivered once the stream closes
            in.skipBytes(in.readableBytes());
            return;
        }
        for (;;) {
            switch (state) {
                case READ_HEADER: {
                    int lead = markersRx && (rxPos & (MARKER_INTERVAL - 1)) == 0 ? MARKER_LENGTH : 0;
                    if (in.readableBytes() < lead + LENGTH_FIELD) {
                        return;
                    }
                    int length = in.getUnsignedShort(in.readerIndex() + lead);
                    if (length > maxUlpduLength) {
                        throw fail(ctx, in, MpaErrorCode.LOCAL_CATASTROPHIC, "ULPDU_Length " + length
                                + " exceeds the configured maximum of " + maxUlpduLength + " octets");
                    }
                    fpduLead = lead;
                    fpduUlpduLength = length;
                    fpduWireLength = wireLength(rxPos, length, markersRx);
                    state = State.READ_FPDU;
                    break;
                }
                case READ_FPDU: {
                    if (in.readableBytes() < fpduWireLength) {
                        return;
                    }
                    ByteBuf ulpdu = readFpdu(ctx, in);
                    out.add(ulpdu);
                    state = State.READ_HEADER;
                    if (txHeld) {
                        releaseHeldWrites(ctx); // RFC 5044 §7.1.2 rule 4: one valid FPDU received
                    }
                    // one ULPDU per call: it is passed on before the next is sliced, which keeps the
                    // number of live slices (and the recycler's overflow) low
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

    private ByteBuf readFpdu(ChannelHandlerContext ctx, ByteBuf in) {
        int start = in.readerIndex();
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
        ByteBuf ulpdu = extractUlpdu(ctx.alloc(), in, start);
        if (LOG.isTraceEnabled()) {
            LOG.trace("{} rx FPDU #{} offset {} ULPDU_Length {} wire {}", ctx.channel(), fpdusReceived + 1,
                    Integer.toUnsignedLong(rxPos), fpduUlpduLength, fpduWireLength);
        }
        in.skipBytes(fpduWireLength);
        rxPos += fpduWireLength;
        fpdusReceived++;
        return ulpdu;
    }

    private ByteBuf extractUlpdu(ByteBufAllocator alloc, ByteBuf in, int start) {
        int off = fpduLead + LENGTH_FIELD;
        int remaining = fpduUlpduLength;
        if (!markersRx || nextMarker(off) >= off + remaining) {
            return in.retainedSlice(start + off, remaining);
        }
        CompositeByteBuf composite = alloc.compositeBuffer(remaining / (MARKER_INTERVAL - MARKER_LENGTH) + 2);
        while (remaining > 0) {
            int n = Math.min(remaining, nextMarker(off) - off);
            composite.addComponent(true, in.retainedSlice(start + off, n));
            off += n + MARKER_LENGTH;
            remaining -= n;
        }
        return composite;
    }

    /** Offset (relative to the current FPDU start) of the first marker position at or after {@code off}. */
    private int nextMarker(int off) {
        return off + ((-(rxPos + off)) & (MARKER_INTERVAL - 1));
    }

    private MpaException fail(ChannelHandlerContext ctx, ByteBuf in, MpaErrorCode code, String what) {
        state = State.FAILED;
        in.skipBytes(in.readableBytes());
        MpaException e = new MpaException(code, what);
        LOG.warn("{} peer {}: {}; no further FPDUs are delivered on this half connection",
                ctx.channel(), ctx.channel().remoteAddress(), e.getMessage());
        return e;
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (state != State.FAILED) {
            decode(ctx, in, out);
        }
        if (in.isReadable() && state != State.FAILED) {
            LOG.debug("{} closed with {} octets of an incomplete FPDU (MPA error 1)", ctx.channel(),
                    in.readableBytes());
            in.skipBytes(in.readableBytes());
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        failHeldWrites(new ClosedChannelException());
        super.channelInactive(ctx);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        failHeldWrites(new ClosedChannelException());
    }

    // ---------------------------------------------------------------- outbound

    /**
     * Sends {@code msg} as one FPDU when it is a {@link ByteBuf} (the ULPDU; this method takes
     * ownership and releases it); passes anything else on unchanged.
     */
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf)) {
            ctx.write(msg, promise);
            return;
        }
        ByteBuf ulpdu = (ByteBuf) msg;
        if (txHeld) {
            if (held == null) {
                held = new PendingWriteQueue(ctx);
            }
            held.add(ulpdu, promise);
            return;
        }
        writeFpdu(ctx, ulpdu, promise);
    }

    private void writeFpdu(ChannelHandlerContext ctx, ByteBuf ulpdu, ChannelPromise promise) {
        int length = ulpdu.readableBytes();
        if (length > MpaSettings.MAX_SEND_ULPDU) {
            ulpdu.release();
            // RFC 5044 §3: DDP MUST NOT hand MPA a ULPDU longer than 64768 octets
            promise.setFailure(new EncoderException("ULPDU of " + length + " octets exceeds "
                    + MpaSettings.MAX_SEND_ULPDU + " (RFC 5044 §3)"));
            return;
        }
        if (!ctx.channel().isActive()) {
            ulpdu.release();
            promise.setFailure(new ClosedChannelException());
            return;
        }
        ByteBufAllocator alloc = ctx.alloc();
        int fpduStart = txPos;
        if (crc) {
            txCrc.reset();
        }
        int n0 = 0;
        if (markersTx && (txPos & (MARKER_INTERVAL - 1)) == 0) {
            // RFC 5044 §7.1.2 rule 7 / §4.3: FPDUPTR 0, the marker opens this FPDU
            n0 = putMarker(0, 0);
            txPos += MARKER_LENGTH;
        }
        scratch[n0++] = (byte) (length >>> 8);
        scratch[n0++] = (byte) length;
        txPos += LENGTH_FIELD;
        if (crc) {
            txCrc.update(scratch, 0, n0);
        }
        ctx.write(alloc.buffer(n0).writeBytes(scratch, 0, n0), ctx.voidPromise());

        int index = ulpdu.readerIndex();
        int remaining = length;
        boolean ulpduWritten = false;
        if (!markersTx && ulpdu instanceof CompositeByteBuf && length > 0) {
            writePieces(ctx, (CompositeByteBuf) ulpdu);
            txPos += length;
            remaining = 0;
            ulpduWritten = true;
        }
        // with markers the payload is CRC'd in up to 127 pieces: take one NIO view for all of them
        // (direct memory with an address goes through txFeed's reused view instead)
        ByteBuffer view = crc && markersTx && length > MARKER_INTERVAL && !ulpdu.hasArray()
                && !ulpdu.hasMemoryAddress() && ulpdu.nioBufferCount() == 1 ? ulpdu.nioBuffer(index, length) : null;
        while (remaining > 0) {
            if (markersTx && (txPos & (MARKER_INTERVAL - 1)) == 0) {
                writeMarker(ctx, alloc, txPos - fpduStart);
            }
            int n = markersTx ? Math.min(remaining, MARKER_INTERVAL - (txPos & (MARKER_INTERVAL - 1))) : remaining;
            if (view != null) {
                int at = index - ulpdu.readerIndex();
                view.limit(at + n).position(at);
                txCrc.update(view);
            } else if (crc) {
                txFeed.update(txCrc, ulpdu, index, n);
            }
            if (n == length) {
                ctx.write(ulpdu, ctx.voidPromise()); // whole ULPDU, no marker inside: hand it on as is
                ulpduWritten = true;
            } else {
                ctx.write(ulpdu.retainedSlice(index, n), ctx.voidPromise());
            }
            index += n;
            remaining -= n;
            txPos += n;
        }
        if (!ulpduWritten) {
            ulpdu.release();
        }

        int pad = (-(LENGTH_FIELD + length)) & 3;
        for (int i = 0; i < pad; i++) {
            scratch[i] = 0;
        }
        int n1 = pad;
        txPos += pad;
        if (markersTx && (txPos & (MARKER_INTERVAL - 1)) == 0) {
            n1 = putMarker(n1, txPos - fpduStart); // marker right after the PAD: part of this FPDU
            txPos += MARKER_LENGTH;
        }
        if (crc) {
            txCrc.update(scratch, 0, n1);
        }
        ByteBuf tail = alloc.buffer(n1 + CRC_LENGTH).writeBytes(scratch, 0, n1);
        tail.writeIntLE(crc ? (int) txCrc.getValue() : 0); // crc.md §1.2: little-endian; 0 when unused
        txPos += CRC_LENGTH;
        if (LOG.isTraceEnabled()) {
            LOG.trace("{} tx FPDU offset {} ULPDU_Length {} wire {}", ctx.channel(),
                    Integer.toUnsignedLong(fpduStart), length, txPos - fpduStart);
        }
        ctx.write(tail, promise);
    }

    /**
     * Sends one FPDU whose ULPDU is {@code header}'s readable octets followed by {@code payload}'s,
     * as {@link #write} would for their concatenation, without a composite: the header octets (a
     * DDP header) go into the framer's own buffer behind ULPDU_Length, the payload is written as
     * is. Copies {@code header} (the caller keeps it); takes ownership of {@code payload}. Call on
     * the event loop, for a framer in a pipeline. With markers, while outbound FPDUs are held
     * (RFC 5044 §7.1.2 rule 4), or for a header longer than 62 octets, the two are joined in a
     * composite and written through {@link #write}.
     */
    public void writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
        ChannelHandlerContext ctx = this.ctx;
        int headerLength = header.readableBytes();
        if (markersTx || txHeld || headerLength > pieceScratch.length - LENGTH_FIELD) {
            ByteBufAllocator alloc = ctx.alloc();
            CompositeByteBuf ulpdu = alloc.compositeBuffer(2);
            ulpdu.addComponents(true, alloc.buffer(headerLength).writeBytes(header, header.readerIndex(),
                    headerLength), payload);
            write(ctx, ulpdu, promise);
            return;
        }
        int length = headerLength + payload.readableBytes();
        if (length > MpaSettings.MAX_SEND_ULPDU || !ctx.channel().isActive()) {
            payload.release();
            promise.setFailure(length > MpaSettings.MAX_SEND_ULPDU ? new EncoderException("ULPDU of " + length
                    + " octets exceeds " + MpaSettings.MAX_SEND_ULPDU + " (RFC 5044 §3)") : new ClosedChannelException());
            return;
        }
        if (payload.readableBytes() <= SMALL_PAYLOAD) {
            writeSmallFpdu(ctx, header, payload, promise);
            return;
        }
        int fpduStart = txPos;
        int n0 = LENGTH_FIELD + headerLength;
        pieceScratch[0] = (byte) (length >>> 8);
        pieceScratch[1] = (byte) length;
        header.getBytes(header.readerIndex(), pieceScratch, LENGTH_FIELD, headerLength);
        if (crc) {
            txCrc.reset();
            txCrc.update(pieceScratch, 0, n0);
        }
        ctx.write(ctx.alloc().buffer(n0).writeBytes(pieceScratch, 0, n0), ctx.voidPromise());
        int n = payload.readableBytes();
        if (n > 0) {
            if (crc) {
                txFeed.update(txCrc, payload, payload.readerIndex(), n);
            }
            ctx.write(payload, ctx.voidPromise());
        } else {
            payload.release();
        }
        int pad = (-(LENGTH_FIELD + length)) & 3;
        for (int i = 0; i < pad; i++) {
            scratch[i] = 0;
        }
        if (crc && pad > 0) {
            txCrc.update(scratch, 0, pad);
        }
        ByteBuf tail = ctx.alloc().buffer(pad + CRC_LENGTH).writeBytes(scratch, 0, pad);
        tail.writeIntLE(crc ? (int) txCrc.getValue() : 0); // crc.md §1.2: little-endian; 0 when unused
        txPos += n0 + n + pad + CRC_LENGTH;
        if (LOG.isTraceEnabled()) {
            LOG.trace("{} tx FPDU offset {} ULPDU_Length {} wire {}", ctx.channel(),
                    Integer.toUnsignedLong(fpduStart), length, txPos - fpduStart);
        }
        ctx.write(tail, promise);
    }

    /**
     * An FPDU with a payload of at most {@link #SMALL_PAYLOAD} octets goes out as one buffer: the payload
     * is copied behind its header. Three outbound entries (header, payload, pad and CRC) cost the sender
     * more than copying a small payload does (issue 13: at 1 KiB, removing entries from the outbound
     * buffer was the largest item of the sending loop's profile). Releases {@code payload}.
     */
    private void writeSmallFpdu(ChannelHandlerContext ctx, ByteBuf header, ByteBuf payload, ChannelPromise promise) {
        int headerLength = header.readableBytes();
        int n = payload.readableBytes();
        int length = headerLength + n;
        int pad = (-(LENGTH_FIELD + length)) & 3;
        int wire = LENGTH_FIELD + length + pad + CRC_LENGTH;
        // built in an array: copies from direct buffers and the CRC then need no NIO view
        byte[] b = smallScratch;
        if (b == null) {
            b = smallScratch = new byte[pieceScratch.length + SMALL_PAYLOAD + 3];
        }
        b[0] = (byte) (length >>> 8);
        b[1] = (byte) length;
        header.getBytes(header.readerIndex(), b, LENGTH_FIELD, headerLength);
        payload.getBytes(payload.readerIndex(), b, LENGTH_FIELD + headerLength, n);
        payload.release();
        int end = LENGTH_FIELD + length;
        for (int i = 0; i < pad; i++) {
            b[end++] = 0;
        }
        int crcValue = 0;
        if (crc) {
            txCrc.reset();
            txCrc.update(b, 0, end);
            crcValue = (int) txCrc.getValue();
        }
        ByteBuf fpdu = ctx.alloc().buffer(wire).writeBytes(b, 0, end);
        fpdu.writeIntLE(crcValue); // crc.md §1.2: little-endian; 0 when unused
        int fpduStart = txPos;
        txPos += wire;
        if (LOG.isTraceEnabled()) {
            LOG.trace("{} tx FPDU offset {} ULPDU_Length {} wire {}", ctx.channel(),
                    Integer.toUnsignedLong(fpduStart), length, wire);
        }
        ctx.write(fpdu, promise);
    }

    /**
     * A composite ULPDU (as DDP hands over: header and payload) is CRC'd and written piece by piece:
     * writev then takes each piece's memory directly, where a composite needs NIO views built for
     * every write (issue 13). Small pieces are CRC'd from the scratch array. Releases {@code ulpdu}.
     */
    private void writePieces(ChannelHandlerContext ctx, CompositeByteBuf ulpdu) {
        int at = ulpdu.readerIndex();
        int end = ulpdu.writerIndex();
        for (int i = ulpdu.toComponentIndex(at); at < end; i++) {
            ByteBuf piece = ulpdu.internalComponent(i);
            int skip = at - ulpdu.toByteIndex(i);
            int from = piece.readerIndex() + skip;
            int n = Math.min(piece.readableBytes() - skip, end - at);
            if (n == 0) {
                continue;
            }
            if (crc && n <= pieceScratch.length) {
                piece.getBytes(from, pieceScratch, 0, n);
                txCrc.update(pieceScratch, 0, n);
            } else if (crc) {
                txFeed.update(txCrc, piece, from, n);
            }
            ctx.write(skip == 0 && n == piece.readableBytes() ? piece.retain() : piece.retainedSlice(from, n),
                    ctx.voidPromise());
            at += n;
        }
        ulpdu.release();
    }

    private void writeMarker(ChannelHandlerContext ctx, ByteBufAllocator alloc, int fpduPtr) {
        int n = putMarker(0, fpduPtr);
        if (crc) {
            txCrc.update(scratch, 0, n);
        }
        ctx.write(alloc.buffer(MARKER_LENGTH).writeBytes(scratch, 0, n), ctx.voidPromise());
        txPos += MARKER_LENGTH;
    }

    /** Writes a marker (RFC 5044 §4.2: 16 reserved zero bits, FPDUPTR) into the scratch at {@code at}. */
    private int putMarker(int at, int fpduPtr) {
        scratch[at] = 0;
        scratch[at + 1] = 0;
        scratch[at + 2] = (byte) (fpduPtr >>> 8);
        scratch[at + 3] = (byte) fpduPtr;
        return at + MARKER_LENGTH;
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (txHeld) {
            flushWhileHeld = true;
            return;
        }
        ctx.flush();
    }

    private void releaseHeldWrites(ChannelHandlerContext ctx) {
        txHeld = false;
        PendingWriteQueue q = held;
        held = null;
        if (q != null) {
            Object ulpdu;
            while ((ulpdu = q.current()) != null) {
                ReferenceCountUtil.retain(ulpdu); // remove() releases the queue's reference
                writeFpdu(ctx, (ByteBuf) ulpdu, q.remove());
            }
        }
        if (flushWhileHeld) {
            flushWhileHeld = false;
            ctx.flush();
        }
    }

    private void failHeldWrites(Throwable cause) {
        PendingWriteQueue q = held;
        held = null;
        if (q != null) {
            q.removeAndFailAll(cause);
        }
    }
}
