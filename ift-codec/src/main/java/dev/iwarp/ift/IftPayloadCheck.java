package dev.iwarp.ift;

import dev.iwarp.framing.Crc32c;
import dev.iwarp.framing.DirectPayloadReader;
import dev.iwarp.framing.PayloadCheck;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

import java.util.zip.CRC32C;

/**
 * IFT's part of a direct read ({@link DirectPayloadReader}): CRC32C over the payload alone, read into its
 * destination, compared with the 4-octet payload CRC field behind it (F4 otherwise). A receiver that does not
 * check payload CRCs (or a peer that sends none) checks nothing; the field, when present, is still skipped.
 *
 * <p>Not thread-safe: confined to the framer's event loop.
 */
final class IftPayloadCheck implements PayloadCheck {
    private final IftFrameReader reader;
    private final boolean checked;
    private final CRC32C crc = new CRC32C();

    IftPayloadCheck(IftFrameReader reader, boolean checked) {
        this.reader = reader;
        this.checked = checked;
    }

    @Override
    public void start(ByteBuf frame, int payloadIndex) {
        crc.reset();
        if (checked) {
            Crc32c.update(crc, frame, payloadIndex, frame.writerIndex() - payloadIndex);
        }
    }

    @Override
    public void update(ByteBuf destination, int index, int length) {
        if (checked) {
            Crc32c.update(crc, destination, index, length);
        }
    }

    @Override
    public void checkTrailer(ChannelHandlerContext ctx, ByteBuf in, int trailer) {
        if (checked) {
            reader.checkPayloadCrc(ctx, in, (int) crc.getValue(), in.getIntLE(in.readerIndex()));
        }
    }
}
