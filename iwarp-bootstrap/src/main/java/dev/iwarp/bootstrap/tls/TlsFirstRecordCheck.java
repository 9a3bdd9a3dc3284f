package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Sits below the TLS handler until the peer's first three octets arrived: when they cannot start a
 * TLS record (RFC 8446 §5.1: content type 20..24, legacy version 3.x) it fails the connection at once
 * with a {@link TlsException} saying what the peer sent instead (a plaintext MPA Request or Reply is
 * named), rather than a generic record error or a handshake timeout. Otherwise it removes itself,
 * passing the octets on.
 */
final class TlsFirstRecordCheck extends ByteToMessageDecoder {
    private static final byte[] MPA_REQUEST = "MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MPA_REPLY = "MPA ID Rep Frame".getBytes(StandardCharsets.US_ASCII);
    private static final int MIN_CONTENT_TYPE = 20; // change_cipher_spec
    private static final int MAX_CONTENT_TYPE = 24; // heartbeat

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
        String what = describe(in);
        in.skipBytes(in.readableBytes());
        ctx.fireExceptionCaught(new TlsException(TlsException.Kind.NOT_TLS, what, null));
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
