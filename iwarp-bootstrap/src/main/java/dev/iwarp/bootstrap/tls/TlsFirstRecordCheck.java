package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import dev.iwarp.mpa.MpaIrdOrd;
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
    private static final byte[] MPA_REQUEST = "MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MPA_REPLY = "MPA ID Rep Frame".getBytes(StandardCharsets.US_ASCII);
    private static final int MIN_CONTENT_TYPE = 20; // change_cipher_spec
    private static final int MAX_CONTENT_TYPE = 24; // heartbeat
    /** RFC 6581's enhanced flag in the Request's flags octet (Res bit 0x10). */
    private static final int ENHANCED = 0x10;
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
        if (startsWith(in, MPA_REQUEST) && in.readableBytes() < MpaStartupFrame.HEADER_LENGTH) {
            return; // wait for the Request's revision octet, to answer it
        }
        String what = describe(in);
        TlsException e = new TlsException(TlsException.Kind.NOT_TLS, what, null);
        if (startsWith(in, MPA_REQUEST) && !server) {
            in.skipBytes(in.readableBytes());
            ctx.fireExceptionCaught(e);
            ctx.close();
            return;
        }
        if (startsWith(in, MPA_REQUEST)) {
            // RFC 5044 §7.1.5: tell a plaintext MPA Initiator why, in its own terms, before closing:
            // a Reply with R=1 in its revision whose private data is the reason
            int revision = in.getUnsignedByte(in.readerIndex() + 17);
            boolean enhanced = revision == 2 && (in.getUnsignedByte(in.readerIndex() + 16) & ENHANCED) != 0;
            MpaStartupFrame.Builder b = MpaStartupFrame.builder(MpaStartupFrame.Type.REPLY).rejected(true)
                    .revision(revision <= 2 ? revision : 1).ulpPrivateData(REASON);
            if (enhanced) { // RFC 6581 §5: a Rev 2 Reply to an enhanced Request carries IRD/ORD
                b.reserved(ENHANCED).irdOrd(MpaIrdOrd.of(0, 0));
            }
            ByteBuf reply = ctx.alloc().buffer();
            b.build().encode(reply);
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
        if (startsWith(in, MPA_REQUEST)) {
            return "the peer sent a plaintext MPA Request, not a TLS record: it is an iWARP client without TLS";
        }
        if (startsWith(in, MPA_REPLY)) {
            return "the peer sent a plaintext MPA Reply, not a TLS record: it is an iWARP server without TLS";
        }
        int n = Math.min(8, in.readableBytes());
        return "the peer's first octets (" + ByteBufUtil.hexDump(in, in.readerIndex(), n) + ") are not a TLS record";
    }

    private static boolean startsWith(ByteBuf in, byte[] prefix) {
        int n = Math.min(prefix.length, in.readableBytes());
        for (int k = 0; k < n; k++) {
            if (in.getByte(in.readerIndex() + k) != prefix[k]) {
                return false;
            }
        }
        return true;
    }
}
