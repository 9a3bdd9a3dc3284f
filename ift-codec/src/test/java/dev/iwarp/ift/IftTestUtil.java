package dev.iwarp.ift;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import static dev.iwarp.testkit.ChannelOctets.bytes;

/** Helpers shared by the IFT tests. */
final class IftTestUtil {
    private IftTestUtil() {
    }

    static int crc32c(byte[] a, int from, int length) {
        CRC32C c = new CRC32C();
        c.update(a, from, length);
        return (int) c.getValue();
    }

    /**
     * An independent frame builder written from the draft's figure on plain byte arrays (sizes and VTag
     * big-endian, CRCs least-significant octet first), with every field overridable for hostile frames.
     */
    static final class RefFrame {
        int headerSize = -1;
        int payloadSize = -1;
        int vTag = IftVectors.VTAG_B;
        boolean headerCrc = true;
        boolean payloadCrc = true;
        /** Added to the computed CRC values (0: correct). */
        int headerCrcDelta;
        int payloadCrcDelta;
        /** When not null: the header CRC is computed over these prefix octets instead of the real ones. */
        byte[] crcPrefixOverride;

        RefFrame crcs(boolean header, boolean payload) {
            this.headerCrc = header;
            this.payloadCrc = payload;
            return this;
        }

        byte[] build(byte[] header, byte[] payload) {
            int hs = headerSize >= 0 ? headerSize : header.length;
            int ps = payloadSize >= 0 ? payloadSize : payload.length;
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] prefix = {(byte) (hs >> 8), (byte) hs, (byte) (ps >> 8), (byte) ps, (byte) (vTag >> 8), (byte) vTag};
            out.writeBytes(prefix);
            out.writeBytes(header);
            if (headerCrc) {
                byte[] covered = new byte[6 + header.length];
                System.arraycopy(crcPrefixOverride != null ? crcPrefixOverride : prefix, 0, covered, 0, 6);
                System.arraycopy(header, 0, covered, 6, header.length);
                le32(out, crc32c(covered, 0, covered.length) + headerCrcDelta);
            }
            out.writeBytes(payload);
            if (payloadCrc) {
                le32(out, crc32c(payload, 0, payload.length) + payloadCrcDelta);
            }
            return out.toByteArray();
        }

        private static void le32(ByteArrayOutputStream out, int v) {
            out.write(v);
            out.write(v >>> 8);
            out.write(v >>> 16);
            out.write(v >>> 24);
        }
    }

    /** The application end of a pipeline: records, in order, what reached it; copies and releases ULPDUs. */
    static final class Recorder extends ChannelInboundHandlerAdapter {
        final List<String> order = new ArrayList<>();
        final List<byte[]> received = new ArrayList<>();
        final List<Throwable> exceptions = new ArrayList<>();
        final List<Object> events = new ArrayList<>();
        IftAdaptionCompletionEvent completion;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                received.add(bytes(b));
                order.add("read");
            } finally {
                b.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            exceptions.add(cause);
            order.add(cause instanceof IftException ? ((IftException) cause).error().id() : "exception");
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
            if (evt instanceof IftAdaptionCompletionEvent) {
                if (completion != null) {
                    throw new AssertionError("two completion events");
                }
                completion = (IftAdaptionCompletionEvent) evt;
                order.add(completion.isSuccess() ? "established" : "failed");
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            order.add("inactive");
        }

        IftException onlyException() {
            if (exceptions.size() != 1) {
                throw new AssertionError("expected one exception, got " + exceptions);
            }
            return (IftException) exceptions.get(0);
        }
    }
}
