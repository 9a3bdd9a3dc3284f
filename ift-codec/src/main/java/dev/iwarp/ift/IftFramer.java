package dev.iwarp.ift;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.DuplexByteToMessageDecoder;
import dev.iwarp.framing.ReadBatch;
import dev.iwarp.framing.UlpduSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

import java.io.IOException;
import java.util.List;

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
 * (RDMAP sends its Terminate, F1-F5, then closes). A FIN or RST inside a frame is F6. Once a sink is
 * bound ({@link #receiveWith}) frames go to it instead, and a large payload still arriving is read into the
 * destination the sink names, straight from the socket after {@link #readDirectlyWith}.
 *
 * <p><b>Outbound</b>: {@link #write} takes a ULPDU (and ownership of it) and writes the frame as up to
 * three buffers: a small head (prefix, a copy of the 14/18-octet DDP header, header CRC), the ULPDU
 * itself advanced past its header (the payload, never copied), and a 4-octet payload CRC. IFT holds
 * nothing back: {@link #isTxHeld()} is always false (no MPA-style rule 4; node A parses frames right
 * after phase 1).
 *
 * <p>The framer owns the handler's state (closing) and leaves the frame work to its two halves, as Netty's
 * HTTP/2 codec leaves it to its frame reader and writer: {@link IftFrameReader} inbound, {@link IftFrameWriter}
 * outbound. Both log as this class.
 */
public class IftFramer extends DuplexByteToMessageDecoder {
    /** header_size, payload_size, receiver's VTag. */
    public static final int PREFIX_LENGTH = 6;
    /** Octets of a CRC field. */
    public static final int CRC_LENGTH = 4;

    /**
     * Payload octets still due, at the fewest, for which the framer reads a payload straight into its
     * destination rather than into a buffer first: reading directly costs up to two extra socket reads per frame
     * (one ending at the DDP header, one for the CRC field and the next header) and saves one memory copy per
     * payload octet (about 1 µs per 4 KiB); below 8 KiB the saved copy does not pay for the reads (the same
     * trade as MPA's framer).
     */
    public static final int DIRECT_READ_MIN = 8192;

    private final int mulpdu;
    private final IftFrameReader reader;
    private final IftFrameWriter writer;
    private ChannelHandlerContext ctx;
    private boolean closing;
    /** When to ask for another read with auto-read off ({@link #channelReadComplete}). */
    private final ReadBatch readBatch = new ReadBatch();

    /** A framer for what an {@link IftAdaptionHandler} negotiated. */
    public IftFramer(IftParameters p) {
        this.mulpdu = p.mulpdu();
        this.reader = new IftFrameReader(p);
        this.writer = new IftFrameWriter(p);
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

    /**
     * From now on each received ULPDU goes to {@code sink} instead of up the pipeline: whole when it is in
     * hand, or, for a large payload still arriving, header first (after the prefix, header CRC, VTag and
     * header_size checks) with the payload read into the destination the sink names: from the socket straight
     * there after {@link #readDirectlyWith}, else copied there from the buffers received. Call on the event loop.
     */
    public void receiveWith(UlpduSink sink) {
        reader.receiveWith(sink);
    }

    /**
     * From now on the framer says through {@code allocator} (the channel's receive-buffer allocator, set before
     * its first read) what the next socket read goes into: a payload's destination, or the octets up to the next
     * frame's DDP header. The caller, who built the pipeline, vouches that every octet the socket reads reaches
     * this framer unchanged and in the buffer it was read into (handlers below may watch, not transform: never
     * under TLS). Null: payloads are copied from the buffers received (the default). Call on the event loop.
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
                    reader.destinationRead(ctx, internalBuffer());
                }
            } finally {
                ((ByteBuf) msg).release();
            }
            return;
        }
        super.channelRead(ctx, msg);
    }

    /**
     * With auto-read off, another read only after a batch that completed no frame, wherever its ULPDU went (the
     * decoder's own rule counts only ULPDUs passed up, so a ULP that stopped reading went on taking every frame
     * lent to the sink): see {@link ReadBatch}.
     */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        discardSomeReadBytes();
        if (readBatch.end(reader.framesReceived()) && !ctx.channel().config().isAutoRead()) {
            ctx.read();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        try {
            super.channelInactive(ctx); // decodeLast first: a payload cut short is F6
        } finally {
            reader.abandon();
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        reader.abandon();
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
        reader.abandon();
        ctx.flush();
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(then);
    }

    // ---------------------------------------------------------------- inbound

    /**
     * Whether octets of a frame not yet complete are held after the last read was decoded (a read can complete one
     * frame and begin the next). On the event loop.
     */
    public boolean holdsIncompleteFrame() {
        return !reader.failed() && (actualReadableBytes() > 0 || reader.readingPayload());
    }

    /** IFT frames received whole so far: a count that only grows (a guard tells from it that one completed). */
    public long framesReceived() {
        return reader.framesReceived();
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (closing) { // nothing is delivered once the stream closes (RFC 5040 §5.4 / §6.2.1)
            in.skipBytes(in.readableBytes());
            return;
        }
        reader.decode(ctx, in, out);
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        // ByteToMessageDecoder has decoded every complete frame already
        if (closing) {
            in.skipBytes(in.readableBytes());
            return;
        }
        IftFramingException e = reader.endOfStream(ctx, in);
        if (e == null) {
            return;
        }
        // the frames before it first, then the error, then (in ByteToMessageDecoder) channelInactive
        for (Object o : out) {
            ctx.fireChannelRead(o);
        }
        out.clear();
        ctx.fireExceptionCaught(e);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            IftFramingException e = reader.connectionLost(ctx, (IOException) cause);
            if (e != null) {
                ctx.fireExceptionCaught(e);
                return;
            }
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
        writer.writeFrame(ctx, (ByteBuf) msg, promise);
    }
}
