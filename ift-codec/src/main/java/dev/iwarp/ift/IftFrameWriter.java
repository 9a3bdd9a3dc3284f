package dev.iwarp.ift;

import dev.iwarp.framing.Crc32c;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.EncoderException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.ClosedChannelException;
import java.util.zip.CRC32C;

import static dev.iwarp.ift.IftFramer.CRC_LENGTH;
import static dev.iwarp.ift.IftFramer.PREFIX_LENGTH;

/**
 * The outbound half of {@link IftFramer}: frames each ULPDU into one IFT frame (IFT draft §5.1) as up to three
 * buffers: a small head (prefix, a copy of the 14/18-octet DDP header, header CRC), the ULPDU itself advanced
 * past its header (the payload, never copied), and a 4-octet payload CRC.
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
final class IftFrameWriter {
    /** The framer's logger: both halves log as {@code IftFramer}. */
    private static final Logger LOG = LoggerFactory.getLogger(IftFramer.class);

    private final int txVTag;
    /** Whether each frame is traced: asked once, when the connection's framer is made (not per frame). */
    private final boolean trace = LOG.isTraceEnabled();
    private final boolean txHeaderCrc;
    private final boolean txPayloadCrc;
    private final IftHeaderLength headerLength;
    private final CRC32C txCrc = new CRC32C();
    /** Prefix and DDP header of the frame being sent: CRC'd and copied from here, no buffer views. */
    private byte[] scratch = new byte[PREFIX_LENGTH + 18];

    IftFrameWriter(IftParameters p) {
        this.txVTag = p.peerVTag();
        this.txHeaderCrc = p.txHeaderCrc();
        this.txPayloadCrc = p.txPayloadCrc();
        this.headerLength = p.headerLength();
    }

    /** Writes {@code ulpdu} (a non-empty ULPDU: DDP header then payload; ownership passes here) as one frame. */
    void writeFrame(ChannelHandlerContext ctx, ByteBuf ulpdu, ChannelPromise promise) {
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
        if (trace) {
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
