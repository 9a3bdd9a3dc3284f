package dev.iwarp.vitcp;

import dev.iwarp.framing.DirectPayloadReader;
import dev.iwarp.framing.PayloadCheck;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

/**
 * VI/TCP's part of a direct read ({@link DirectPayloadReader}): the trailer CRC, which covers the whole segment
 * from its first header octet through the payload (draft-dicecco-vitcp-01 §3.6), computed over the headers as
 * received and the payload as read into its destination, and compared with the trailer.
 *
 * <p>Unlike MPA's and IFT's checks it never throws: §3.6 (action 2) delivers a segment with a bad CRC, with
 * status transport error, rather than ending the stream, so the decoder asks {@link #matched()} once the
 * trailer was read and flags the segment ({@link ViSegment#crcError()}); the VI applies the rule for its
 * reliability level. Without a trailer (the CRC option off) it checks nothing.
 *
 * <p>Not thread-safe: confined to the decoder's event loop.
 */
final class VitcpPayloadCheck implements PayloadCheck {
    private final VitcpCrcMode mode;
    /** Whether the current segment has a trailer. */
    private boolean trailer;
    private int register;
    private boolean matched;

    VitcpPayloadCheck(VitcpCrcMode mode) {
        this.mode = mode;
    }

    /** The next segment read into place has a trailer CRC, or not. */
    void expectTrailer(boolean present) {
        trailer = present;
    }

    @Override
    public void start(ByteBuf frame, int payloadIndex) {
        matched = false;
        if (trailer) { // the readable octets are the segment from its first header octet
            register = VitcpCrc.update(mode, VitcpCrc.INITIAL, frame, frame.readerIndex(), frame.readableBytes());
        }
    }

    @Override
    public void update(ByteBuf destination, int index, int length) {
        if (trailer) {
            register = VitcpCrc.update(mode, register, destination, index, length);
        }
    }

    @Override
    public void checkTrailer(ChannelHandlerContext ctx, ByteBuf in, int trailerLength) {
        matched = !trailer || VitcpCrc.finish(register) == VitcpCrc.getCrc(mode, in, in.readerIndex());
    }

    /** Whether the last segment's trailer matched its CRC (or it had none). */
    boolean matched() {
        return matched;
    }
}
