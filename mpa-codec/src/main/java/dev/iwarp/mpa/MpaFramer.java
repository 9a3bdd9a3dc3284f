package dev.iwarp.mpa;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.DuplexByteToMessageDecoder;
import dev.iwarp.framing.ReadBatch;
import dev.iwarp.framing.UlpduSink;
import dev.iwarp.mpa.internal.FpduCumulation;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

import java.nio.channels.ClosedChannelException;
import java.util.List;

/**
 * MPA full operation (RFC 5044 §4-§6): ULPDU ({@link ByteBuf}) to FPDU and back.
 *
 * <pre>
 *  [marker]* ULPDU_Length(16, BE) | ULPDU | PAD 0..3 | [marker] | CRC32C (little-endian on the wire)
 * </pre>
 *
 * <p><b>Inbound</b>: a pure byte-stream decoder (it never depends on how TCP segmented the stream);
 * each FPDU yields one ULPDU buffer, a retained slice of the received bytes (a read-only view of its
 * pieces when markers sit inside it): no copies. The receiver owns and must release it. CRC and markers are
 * checked before anything is delivered; a mismatch raises {@link MpaException} code 2 or 3 and
 * nothing more is delivered on this half connection (RFC 5044 §8). MPA does not close the
 * connection itself then: the ULP (RDMAP) sends its Terminate and closes.
 *
 * <p><b>Outbound</b>: {@link #write} takes a ULPDU buffer (and ownership of it) and sends the FPDU
 * as a few writes: a small header buffer, the ULPDU itself (or retained slices of it, cut at marker
 * positions), and a small trailer with pad, any marker and the CRC: a large payload is never copied (a
 * payload of at most 1 KiB handed to {@link #writeUlpdu} is copied behind its header into a buffer shared by
 * consecutive small FPDUs, written at flush or when full, which costs the sender less than three outbound
 * entries, or one, per FPDU). This is why the framer is a {@link io.netty.handler.codec.ByteToMessageDecoder} plus a hand-written outbound side rather than a
 * {@code ByteToMessageCodec}, whose encoder would copy every payload into one output buffer.
 *
 * <p>As Responder the framer holds every outbound FPDU until one valid FPDU has been received
 * (RFC 5044 §7.1.2 rule 4), then sends them in order ({@link TxHold}).
 *
 * <p>Markers occupy every 512th stream position counted from each direction's first octet after its
 * startup frame (RFC 5044 §4.3); the framer is created at exactly that point of both directions.
 *
 * <p>The framer owns the handler's state (rule 4's hold, closing) and leaves the FPDU work to its
 * two halves, as Netty's HTTP/2 codec leaves it to its frame reader and writer: {@link FpduReader}
 * inbound, {@link FpduWriter} outbound. Both log as this class.
 */
public class MpaFramer extends DuplexByteToMessageDecoder {
    /** Marker interval (RFC 5044 §4.3). */
    public static final int MARKER_INTERVAL = 512;
    /** Octets of a marker. */
    public static final int MARKER_LENGTH = 4;
    /** Octets of the ULPDU_Length field. */
    public static final int LENGTH_FIELD = 2;
    /** Octets of the CRC field. */
    public static final int CRC_LENGTH = 4;

    /**
     * Payload octets still due, at the fewest, for which the framer reads a payload straight into its
     * destination rather than into a buffer first. Reading directly costs two extra socket reads per FPDU (one
     * ending at the DDP header, one for pad and CRC, each well under 2 µs on Linux), and saves one memory copy
     * per payload octet (a few GB/s, so about 1 µs per 4 KiB): below 8 KiB the saved copy does not pay for
     * the reads. Units this small, inbound markers (a payload is then cut by markers) and TLS (the socket
     * carries records, not FPDUs) keep the cumulation and one copy into place.
     */
    public static final int DIRECT_READ_MIN = 8192;

    private final boolean crc;
    private final boolean markersTx;
    private final boolean markersRx;
    private final FpduReader reader;
    private final FpduWriter writer;

    /** RFC 5044 §7.1.2 rule 4: outbound FPDUs held until one valid FPDU was received. */
    private final TxHold hold;
    private ChannelHandlerContext ctx;
    private boolean closing;
    /** When to ask for another read with auto-read off ({@link #channelReadComplete}). */
    private final ReadBatch readBatch = new ReadBatch();

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
        this.reader = new FpduReader(crc, markersRx, maxUlpduLength);
        this.writer = new FpduWriter(crc, markersTx, mulpdu);
        this.hold = new TxHold(holdTx);
        setCumulator(new FpduCumulator());
    }

    /**
     * MULPDU: the largest ULPDU DDP should hand this framer (RFC 5044 §4.5). After {@link #followEmss}
     * it tracks the connection's EMSS, re-read after {@value FpduWriter#EMSS_CHECK_INTERVAL} calls and 5 ms where the
     * transport exposes it (epoll's TCP_INFO): Linux starts a connection's MSS at half the peer's first
     * window (32768 on loopback, so a 64 KiB Write took three FPDUs) and raises it as the window grows.
     */
    public int mulpdu() {
        return writer.mulpdu(ctx);
    }

    /** From now on {@link #mulpdu()} follows the EMSS (RFC 5044 §4.5: MULPDU derives from the current EMSS). */
    void followEmss() {
        writer.followEmss();
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
        return hold.isHeld();
    }

    /**
     * From now on each received ULPDU goes to {@code sink} instead of up the pipeline: whole when it is in
     * hand, or, for a large payload still arriving without inbound markers, header first with the payload
     * read into the destination the sink names: from the socket straight there after {@link
     * #readDirectlyWith}, else copied there from the buffers received. Call on the event loop.
     */
    public void receiveWith(UlpduSink sink) {
        reader.receiveWith(sink, () -> hold.release(this, this.ctx)); // §7.1.2 rule 4: one valid FPDU received
    }

    /**
     * From now on the framer says through {@code allocator} (the channel's receive-buffer allocator, set
     * before its first read) what the next socket read goes into: a payload's destination, or the octets up to
     * the next DDP header. The caller, who built the pipeline, vouches that every octet the socket reads reaches
     * this framer unchanged and in the buffer it was read into: handlers below it may watch the reads (each
     * destination read arrives as a buffer whose readable octets are exactly the ones read) but must pass them
     * on as they are; never under TLS or another handler that transforms the stream. Null: payloads are copied
     * from the buffers received (the default). Call on the event loop.
     */
    public void readDirectlyWith(DirectReadAllocator allocator) {
        reader.readDirectlyWith(allocator);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        readBatch.read();
        if (reader.isDestination(msg)) { // a socket read made straight into a payload's destination
            try {
                if (!closing) {
                    reader.destinationRead(ctx);
                }
            } finally {
                ((ByteBuf) msg).release();
            }
            return;
        }
        super.channelRead(ctx, msg);
    }

    /**
     * Whether octets of an FPDU not yet complete are held after the last read was decoded: a read can complete one
     * FPDU and begin the next, so a watchdog that only sees complete ULPDUs pass up cannot tell. On the event loop.
     */
    public boolean holdsIncompleteFpdu() {
        return !reader.failed() && (actualReadableBytes() > 0 || reader.readingPayload());
    }

    /** FPDUs received whole so far: a count that only grows (a guard tells from it that one completed). */
    public long fpdusReceived() {
        return reader.fpdusReceived();
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
        reader.abandon();
        flush(ctx);
        // an empty buffer written below the framer completes after everything written before it
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(then);
    }

    /**
     * Octets an FPDU occupies on the wire when it starts {@code streamPos} octets after SeqStart: length field,
     * ULPDU, pad, the markers that fall inside it, and the CRC (RFC 5044 §4.3).
     */
    public static int wireLength(int streamPos, int ulpduLength, boolean markers) {
        return FpduGeometry.wireLength(streamPos, ulpduLength, markers);
    }

    /** MULPDU for an EMSS (RFC 5044 §4.5), clamped to 128..64768. */
    public static int mulpdu(int emss, boolean markers) {
        return FpduGeometry.mulpdu(emss, markers);
    }

    // ---------------------------------------------------------------- inbound

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (closing) { // RFC 5040 §5.4 / §6.2.1: nothing is delivered once the stream closes
            in.skipBytes(in.readableBytes());
            return;
        }
        if (in instanceof FpduCumulation) {
            FpduCumulation reads = (FpduCumulation) in;
            int k = reads.parts() - 1;
            if (k > 0 && in.readerIndex() >= reads.partStart(k)) {
                decodeFromLastRead(ctx, reads, k, out);
                return;
            }
        }
        decodeOne(ctx, in, out);
    }

    private void decodeOne(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        // a ULPDU is lent only once rule 4 let writes go: held writes leave before anything it causes
        if (reader.decode(ctx, in, out, !hold.isHeld()) && hold.isHeld()) {
            hold.release(this, ctx); // RFC 5044 §7.1.2 rule 4: one valid FPDU received
        }
    }

    /**
     * The FPDU that straddled two socket reads is done and what is left is all in the last read ({@code reads}'
     * part {@code k}): decoded from that read's buffer itself, not through the view of every part, each of whose
     * accesses looks for its part first. After a straddle, every later FPDU of the read went through the view
     * (its header, its CRC and the copy of its payload): with 1 KiB FPDUs, nearly every FPDU, as nearly every read
     * ends inside one.
     */
    private void decodeFromLastRead(ChannelHandlerContext ctx, FpduCumulation reads, int k, List<Object> out) {
        ByteBuf last = reads.part(k);
        int offset = reads.partIndex(k) - reads.partStart(k);
        int from = reads.readerIndex() + offset;
        int r = last.readerIndex();
        int w = last.writerIndex();
        last.setIndex(from, reads.writerIndex() + offset);
        try {
            decodeOne(ctx, last, out);
        } finally {
            int consumed = last.readerIndex() - from;
            last.setIndex(r, w);
            reads.skipBytes(consumed);
        }
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (!reader.failed()) {
            decode(ctx, in, out);
        }
        reader.discardIncomplete(ctx, in);
    }

    /**
     * With auto-read off, another read only after a batch that completed no FPDU, wherever its ULPDU went (the
     * decoder's own rule counts only ULPDUs passed up, so a ULP that stopped reading went on taking every FPDU
     * lent to the sink): see {@link ReadBatch}.
     */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        discardSomeReadBytes();
        if (readBatch.end(reader.fpdusReceived()) && !ctx.channel().config().isAutoRead()) {
            ctx.read();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        writer.endBatch(ctx); // fails below, as the unflushed writes before it, and is released
        reader.abandon();
        hold.fail(new ClosedChannelException());
        super.channelInactive(ctx);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        writer.endBatch(ctx);
        reader.abandon();
        hold.fail(new ClosedChannelException());
    }

    // ---------------------------------------------------------------- outbound

    /**
     * Sends {@code msg} as one FPDU when it is a {@link ByteBuf} (the ULPDU; this method takes
     * ownership and releases it); passes anything else on unchanged.
     */
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf)) {
            writer.endBatch(ctx);
            ctx.write(msg, promise);
            return;
        }
        ByteBuf ulpdu = (ByteBuf) msg;
        if (hold.isHeld()) {
            hold.hold(ctx, ulpdu, promise);
            return;
        }
        writer.writeFpdu(ctx, ulpdu, promise);
    }

    /**
     * Sends one FPDU whose ULPDU is {@code header}'s readable octets followed by {@code payload}'s,
     * as {@link #write} would for their concatenation, without a composite: the header octets (a
     * DDP header) go into the framer's own buffer behind ULPDU_Length, the payload is written as
     * is. Copies {@code header} (the caller keeps it); takes ownership of {@code payload}. Call on
     * the event loop, for a framer in a pipeline. With markers, while outbound FPDUs are held
     * (RFC 5044 §7.1.2 rule 4), or for a header longer than 62 octets, the two are joined in a
     * composite and written through {@link #write}.
     *
     * @return whether the payload was copied into the FPDU and released here (a payload of at most 1024
     *         octets, without markers and while nothing is held): the caller's memory is then no longer
     *         referenced, although the FPDU may still wait in the outbound buffer
     */
    public boolean writeUlpdu(ByteBuf header, ByteBuf payload, ChannelPromise promise) {
        ChannelHandlerContext ctx = this.ctx;
        int headerLength = header.readableBytes();
        if (hold.isHeld() || writer.mustJoin(headerLength)) {
            write(ctx, FpduWriter.joined(ctx.alloc(), header, payload), promise);
            return false;
        }
        return writer.writeUlpdu(ctx, header, payload, promise);
    }

    /**
     * Whether {@link #writeUlpdu} called now with a header of {@code headerLength} octets and a payload of
     * {@code payloadLength} copies the payload into its FPDU and releases it (and returns true).
     */
    public boolean copiesUlpdu(int headerLength, int payloadLength) {
        return !hold.isHeld() && !writer.mustJoin(headerLength) && payloadLength <= FpduWriter.SMALL_PAYLOAD
                && ctx != null && ctx.channel().isActive();
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (hold.isHeld()) {
            hold.holdFlush();
            return;
        }
        writer.endBatch(ctx);
        ctx.flush();
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        // what was written goes below first, as the unflushed writes before it (a TCP channel's disconnect is a close)
        writer.endBatch(ctx);
        ctx.close(promise);
    }
}
