package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.EncoderException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.zip.CRC32C;

import static dev.iwarp.mpa.MpaFramer.CRC_LENGTH;
import static dev.iwarp.mpa.MpaFramer.LENGTH_FIELD;
import static dev.iwarp.mpa.MpaFramer.MARKER_INTERVAL;
import static dev.iwarp.mpa.MpaFramer.MARKER_LENGTH;

/**
 * The outbound half of {@link MpaFramer}: frames each ULPDU into one FPDU (RFC 5044 §4-§6) as a
 * small header buffer, the ULPDU itself (or retained slices of it, cut at marker positions, each
 * marker a small buffer of its own) and a small trailer with pad, any marker and the CRC: no payload
 * octet is copied, except a payload of at most {@link #SMALL_PAYLOAD} octets handed over with its
 * header ({@link #writeUlpdu}), whose FPDU is one buffer. Tracks this direction's stream position for
 * the markers and the MULPDU DDP should use. Holding FPDUs (RFC 5044 §7.1.2 rule 4) is the framer's.
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
final class FpduWriter {
    /** The framer's logger: both halves log as {@code MpaFramer}. */
    private static final Logger LOG = LoggerFactory.getLogger(MpaFramer.class);
    /** Payloads up to this many octets are copied into their FPDU's one buffer ({@link #writeSmallFpdu}). */
    static final int SMALL_PAYLOAD = 1024;
    /** Calls of {@link MpaFramer#mulpdu()} between two readings of the connection's EMSS, at the fewest. */
    static final int EMSS_CHECK_INTERVAL = 64;
    /**
     * Nanoseconds between two readings of the EMSS, at the fewest, after a reading that changed the MULPDU: each is
     * a {@code getsockopt} (3 % of the sending loop's samples at 2 million 1 KiB Writes a second, when it ran every
     * 64 calls; 9 % of a loaded bench's loop Java samples at one per 5 ms). Each reading that finds the MULPDU unchanged
     * doubles the interval, up to {@link #EMSS_CHECK_MAX_NANOS}: a new loopback connection's MSS grows with the
     * peer's window in its first milliseconds and is followed closely; a settled one is read once a second.
     */
    static final long EMSS_CHECK_NANOS = 5_000_000;
    /** Nanoseconds between two readings of an EMSS that stopped changing (RFC 5044 §4.5: a path MTU change). */
    static final long EMSS_CHECK_MAX_NANOS = 1_000_000_000;

    private final boolean crc;
    private final boolean markersTx;
    /**
     * Whether each FPDU is traced: asked once, when the connection's framer is made (a logger's level check per
     * FPDU asks the logging backend's filters each time).
     */
    private final boolean trace = LOG.isTraceEnabled();
    private int mulpdu;
    /** Whether {@link #mulpdu} follows the connection's EMSS (none was configured). */
    private boolean followEmss;
    private int callsUntilEmssCheck;
    private long lastEmssCheck = System.nanoTime();
    private long emssCheckNanos = EMSS_CHECK_NANOS;
    private final CRC32C txCrc = new CRC32C();
    /** CRC input over direct memory through one reused NIO view (no view per FPDU). */
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
    /** Small FPDUs not yet written below the framer: one outbound entry for many (see {@link FpduBatch}). */
    private final FpduBatch batch = new FpduBatch();
    /** Octets sent since this direction's SeqStart. */
    private int txPos;

    FpduWriter(boolean crc, boolean markersTx, int mulpdu) {
        this.crc = crc;
        this.markersTx = markersTx;
        this.mulpdu = mulpdu;
    }

    /** See {@link MpaFramer#mulpdu()}; {@code ctx} is null before the framer joins a pipeline. */
    int mulpdu(ChannelHandlerContext ctx) {
        if (followEmss && --callsUntilEmssCheck < 0) {
            callsUntilEmssCheck = EMSS_CHECK_INTERVAL;
            long now = System.nanoTime();
            if (now - lastEmssCheck >= emssCheckNanos) {
                lastEmssCheck = now;
                int emss = ctx == null ? -1 : Emss.current(ctx.channel());
                int m = emss > 0 ? MpaFramer.mulpdu(emss, markersTx) : mulpdu;
                emssCheckNanos = m != mulpdu ? EMSS_CHECK_NANOS : Math.min(2 * emssCheckNanos, EMSS_CHECK_MAX_NANOS);
                mulpdu = m;
            }
        }
        return mulpdu;
    }

    /** From now on {@link #mulpdu} follows the EMSS (RFC 5044 §4.5: MULPDU derives from the current EMSS). */
    void followEmss() {
        followEmss = true;
    }

    /**
     * Whether {@link #writeUlpdu} cannot send a ULPDU with a header of {@code headerLength} octets:
     * with markers, or for a header longer than 62 octets, the caller joins header and payload and
     * uses {@link #writeFpdu}.
     */
    boolean mustJoin(int headerLength) {
        return markersTx || headerLength > pieceScratch.length - LENGTH_FIELD;
    }

    /**
     * Writes the open batch of small FPDUs, if any, below the framer: before any other write passes the framer,
     * at flush, close and removal, so that the order on the wire is the order of the writes.
     */
    void endBatch(ChannelHandlerContext ctx) {
        batch.end(ctx);
    }

    /**
     * One ULPDU of a copy of {@code header}'s readable octets (the caller keeps {@code header}) followed by
     * {@code payload} (taken), joined in a composite, for an FPDU {@link #writeUlpdu} cannot write from the two.
     */
    static CompositeByteBuf joined(ByteBufAllocator alloc, ByteBuf header, ByteBuf payload) {
        int headerLength = header.readableBytes();
        CompositeByteBuf ulpdu = alloc.compositeBuffer(2);
        ulpdu.addComponents(true, alloc.buffer(headerLength).writeBytes(header, header.readerIndex(), headerLength),
                payload);
        return ulpdu;
    }

    /** Sends {@code ulpdu} as one FPDU; takes ownership of it and completes {@code promise} with the trailer. */
    void writeFpdu(ChannelHandlerContext ctx, ByteBuf ulpdu, ChannelPromise promise) {
        int length = ulpdu.readableBytes();
        if (refused(ctx, length, ulpdu, promise)) {
            return;
        }
        batch.end(ctx);
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
        ByteBuf tail = trailer(alloc, n1);
        txPos += CRC_LENGTH;
        trace(ctx, fpduStart, length);
        ctx.write(tail, promise);
    }

    /**
     * Sends one FPDU whose ULPDU is {@code header}'s readable octets followed by {@code payload}'s,
     * as {@link #writeFpdu} would for their concatenation: the header octets go behind ULPDU_Length
     * into the framer's own buffer, the payload is written as is. Copies {@code header}; takes
     * ownership of {@code payload}. Only when {@link #mustJoin} is false. Returns whether the payload
     * was copied into the FPDU and released ({@link #writeSmallFpdu}).
     */
    boolean writeUlpdu(ChannelHandlerContext ctx, ByteBuf header, ByteBuf payload, ChannelPromise promise) {
        int headerLength = header.readableBytes();
        int length = headerLength + payload.readableBytes();
        if (refused(ctx, length, payload, promise)) {
            return false;
        }
        if (payload.readableBytes() <= SMALL_PAYLOAD) {
            writeSmallFpdu(ctx, header, payload, promise);
            return true;
        }
        batch.end(ctx);
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
        ByteBuf tail = trailer(ctx.alloc(), pad);
        txPos += n0 + n + pad + CRC_LENGTH;
        trace(ctx, fpduStart, length);
        ctx.write(tail, promise);
        return false;
    }

    /**
     * An FPDU with a payload of at most {@link #SMALL_PAYLOAD} octets is copied behind its header into the open
     * {@link FpduBatch}, with the FPDUs written before it: three outbound entries (header, payload, pad and CRC)
     * cost the sender more than copying a small payload does (at 1 KiB, removing entries from the outbound
     * buffer was the largest item of the sending loop's profile), and so did one buffer and one entry per FPDU
     * (allocation and outbound-buffer entries led the profile of 1 KiB Reads at ORD 128). Releases {@code payload}.
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
        int fpduStart = txPos;
        txPos += wire;
        trace(ctx, fpduStart, length);
        batch.append(ctx, b, end, crcValue, promise);
    }

    /**
     * RFC 5044 §3: DDP MUST NOT hand MPA a ULPDU longer than 64768 octets; nor is anything sent once the
     * connection closed. True (with {@code owned} released and {@code promise} failed) when {@code length}
     * octets cannot be sent.
     */
    private static boolean refused(ChannelHandlerContext ctx, int length, ByteBuf owned, ChannelPromise promise) {
        if (length > MpaSettings.MAX_SEND_ULPDU) {
            owned.release();
            promise.setFailure(new EncoderException("ULPDU of " + length + " octets exceeds "
                    + MpaSettings.MAX_SEND_ULPDU + " (RFC 5044 §3)"));
            return true;
        }
        if (!ctx.channel().isActive()) {
            owned.release();
            promise.setFailure(new ClosedChannelException());
            return true;
        }
        return false;
    }

    /** The trailer: the first {@code n} octets of the scratch (pad, any marker), CRC'd, then the CRC field. */
    private ByteBuf trailer(ByteBufAllocator alloc, int n) {
        if (crc) {
            txCrc.update(scratch, 0, n);
        }
        return alloc.buffer(n + CRC_LENGTH).writeBytes(scratch, 0, n)
                .writeIntLE(crc ? (int) txCrc.getValue() : 0); // RFC 5044 §4.4: little-endian; 0 when unused
    }

    /** The FPDU that started at stream offset {@code fpduStart} and ends at {@code txPos}. */
    private void trace(ChannelHandlerContext ctx, int fpduStart, int length) {
        if (trace) {
            LOG.trace("{} tx FPDU offset {} ULPDU_Length {} wire {}", ctx.channel(),
                    Integer.toUnsignedLong(fpduStart), length, txPos - fpduStart);
        }
    }

    /**
     * A composite ULPDU (as DDP hands over: header and payload) is CRC'd and written piece by piece:
     * writev then takes each piece's memory directly, where a composite needs NIO views built for
     * every write. Small pieces are CRC'd from the scratch array. Releases {@code ulpdu}.
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
}
