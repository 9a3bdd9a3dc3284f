package dev.iwarp.mpa;

import dev.iwarp.framing.DirectPayloadReader;
import dev.iwarp.framing.PayloadCheck;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

import java.util.zip.CRC32C;

import static dev.iwarp.mpa.MpaFramer.CRC_LENGTH;

/**
 * MPA's part of a direct read ({@link DirectPayloadReader}): CRC32C over the FPDU from its ULPDU_Length field
 * through the pad (RFC 5044 §4.4), the payload taken from its destination, compared with the CRC field
 * (RFC 5044 §8 code 2 otherwise). Direct reads apply only without markers, so the covered octets are one run.
 * Without a negotiated CRC it checks nothing (the pad is still skipped). Shares the cumulating reader's CRC
 * state: an FPDU is either read directly or checked whole, never both.
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
final class FpduPayloadCheck implements PayloadCheck {
    private final FpduReader fpdu;
    private final boolean crc;
    private final CRC32C rxCrc;
    private final Crc32cFeed rxFeed;

    FpduPayloadCheck(FpduReader fpdu, boolean crc, CRC32C rxCrc, Crc32cFeed rxFeed) {
        this.fpdu = fpdu;
        this.crc = crc;
        this.rxCrc = rxCrc;
        this.rxFeed = rxFeed;
    }

    @Override
    public void start(ByteBuf frame, int payloadIndex) {
        if (crc) {
            rxCrc.reset();
            rxFeed.update(rxCrc, frame, frame.readerIndex(), frame.readableBytes());
        }
    }

    @Override
    public void update(ByteBuf destination, int index, int length) {
        if (crc) {
            rxFeed.update(rxCrc, destination, index, length);
        }
    }

    @Override
    public void checkTrailer(ChannelHandlerContext ctx, ByteBuf in, int trailer) {
        if (crc) {
            int start = in.readerIndex();
            rxFeed.update(rxCrc, in, start, trailer - CRC_LENGTH);
            int computed = (int) rxCrc.getValue();
            int received = in.getIntLE(start + trailer - CRC_LENGTH);
            if (computed != received) {
                // RFC 5044 §8 code 2: the payload was placed, inside the range DDP checked; the error ends the stream
                throw fpdu.crcError(ctx, in, received, computed);
            }
        }
    }
}
