package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import dev.iwarp.mpa.MpaStartupFrame;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Sits below the TLS handler until the peer's first three octets arrived: when they cannot start a
 * TLS record (RFC 8446 §5.1: content type 20..24, legacy version 3.x) it fails the connection at once
 * with a {@link TlsException} saying what the peer sent instead (a plaintext MPA Request or Reply is
 * named), rather than a generic record error or a handshake timeout. A server answers a plaintext
 * MPA Request with an MPA Reply rejecting it (R=1) whose private data says TLS is required, so the
 * plaintext client fails at once with that reason too. Otherwise it removes itself, passing the
 * octets on.
 */
final class TlsFirstRecordCheck extends ByteToMessageDecoder {
    private static final int MIN_CONTENT_TYPE = 20; // change_cipher_spec
    private static final int MAX_CONTENT_TYPE = 24; // heartbeat
    private static final byte[] REASON = "TLS required: this iWARP server accepts MPA only inside TLS"
            .getBytes(StandardCharsets.US_ASCII);

    private final boolean server;

    TlsFirstRecordCheck(boolean server) {
        this.server = server;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < 3) {
            return;
        }
        int i = in.readerIndex();
        int type = in.getUnsignedByte(i);
        if (type >= MIN_CONTENT_TYPE && type <= MAX_CONTENT_TYPE && in.getUnsignedByte(i + 1) == 3) {
            ctx.pipeline().remove(this); // passes what it holds on to the TLS handler
            return;
        }
        if (MpaStartupFrame.mayBeKey(in, MpaStartupFrame.Type.REQUEST) && in.readableBytes() < MpaStartupFrame.HEADER_LENGTH) {
            return; // wait for the Request's revision octet, to answer it
        }
        String what = describe(in);
        TlsException e = new TlsException(TlsException.Kind.NOT_TLS, what, null);
        if (MpaStartupFrame.mayBeKey(in, MpaStartupFrame.Type.REQUEST) && !server) {
            in.skipBytes(in.readableBytes());
            ctx.fireExceptionCaught(e);
            ctx.close();
            return;
        }
        if (MpaStartupFrame.mayBeKey(in, MpaStartupFrame.Type.REQUEST)) {
            // RFC 5044 §7.1.5: tell a plaintext MPA Initiator why, in its own terms, before closing:
            // a Reply with R=1 whose private data is the reason
            ByteBuf reply = ctx.alloc().buffer();
            MpaStartupFrame.refusalOf(in, REASON).encode(reply);
            in.skipBytes(in.readableBytes());
            ctx.fireExceptionCaught(e);
            ctx.writeAndFlush(reply).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        in.skipBytes(in.readableBytes());
        ctx.fireExceptionCaught(e);
        ctx.close();
    }

    private static String describe(ByteBuf in) {
        if (MpaStartupFrame.mayBeKey(in, MpaStartupFrame.Type.REQUEST)) {
            return "the peer sent a plaintext MPA Request, not a TLS record: it is an iWARP client without TLS";
        }
        if (MpaStartupFrame.mayBeKey(in, MpaStartupFrame.Type.REPLY)) {
            return "the peer sent a plaintext MPA Reply, not a TLS record: it is an iWARP server without TLS";
        }
        int n = Math.min(8, in.readableBytes());
        return "the peer's first octets (" + ByteBufUtil.hexDump(in, in.readerIndex(), n) + ") are not a TLS record";
    }
}
