package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TlsWriteGatherer} changes no record: the same writes and flushes (FPDUs as header, payload slice of a
 * region and trailer, several messages per flush, a lone write, a flush with nothing new) give records of the same
 * types and lengths with the gatherer as with {@code SslHandler} gathering alone, the peer reads the same
 * plaintext, and every write's promise completes once it was sealed.
 */
class TlsWriteGathererTest {
    private static final TlsCertificates.CertifiedKey SELF;

    static {
        try {
            SELF = TlsCertificates.selfSigned("gatherer", Duration.ofDays(1));
        } catch (java.security.GeneralSecurityException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @ParameterizedTest
    @EnumSource(TlsProvider.class)
    void recordsAreThoseSslHandlerMakesAlone(TlsProvider provider) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(provider.isAvailable(), provider + " not available here");
        Run with = run(provider, true);
        Run without = run(provider, false);
        assertEquals(without.records, with.records, "record types and lengths");
        assertArrayEquals(without.plaintext, with.plaintext, "plaintext");
        assertArrayEquals(written(), with.plaintext, "plaintext as written");
    }

    /** What a run sent: each record as type * 100000 + length, and the plaintext the peer opened. */
    private record Run(List<Integer> records, byte[] plaintext) {
    }

    private static Run run(TlsProvider provider, boolean gather) throws Exception {
        EmbeddedChannel c = new EmbeddedChannel();
        EmbeddedChannel s = new EmbeddedChannel();
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        ByteBuf region = ByteBufAllocator.DEFAULT.directBuffer(REGION).writeBytes(regionOctets());
        try {
            Future<Channel> serverUp = TlsLayer.addServer(s.pipeline(), TlsSettings.builder().identity(SELF)
                    .provider(provider).build(), p -> p.addLast(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ByteBuf b = (ByteBuf) msg;
                            byte[] octets = new byte[b.readableBytes()];
                            b.readBytes(octets);
                            received.writeBytes(octets);
                            b.release();
                        }
                    }));
            Future<Channel> clientUp = TlsLayer.addClient(c.pipeline(), TlsSettings.builder().pin(SELF.fingerprint())
                    .provider(provider).build(), null, p -> { });
            for (int i = 0; i < 50 && !(serverUp.isDone() && clientUp.isDone()); i++) {
                move(c, s);
                move(s, c);
            }
            assertTrue(clientUp.isSuccess() && serverUp.isSuccess(), "handshake");
            move(s, c); // TLS 1.3's session tickets
            if (!gather) {
                c.pipeline().remove(TlsLayer.GATHER);
            }
            List<Integer> records = new ArrayList<>();
            List<ChannelFuture> promises = new ArrayList<>();
            ChannelHandlerContext top = c.pipeline().context(TlsLayer.STATE);
            int at = 0;
            for (int[] flush : FLUSHES) {
                for (int length : flush) {
                    // an FPDU as the framer writes it: header, payload (a slice of the region), pad and trailer
                    top.write(Unpooled.buffer(20).writeBytes(header(length)), top.voidPromise());
                    top.write(region.retainedSlice(at, length), top.voidPromise());
                    promises.add(top.write(Unpooled.directBuffer(4).writeInt(length)));
                    at = (at + length) % (REGION - 17_000);
                }
                top.flush();
                top.flush(); // nothing new
                ByteBuf sent = Unpooled.buffer();
                for (Object m = c.readOutbound(); m != null; m = c.readOutbound()) {
                    sent.writeBytes((ByteBuf) m);
                    ((ByteBuf) m).release();
                }
                for (int i = sent.readerIndex(); i < sent.writerIndex(); ) {
                    int length = sent.getUnsignedShort(i + 3);
                    records.add(sent.getUnsignedByte(i) * 100_000 + length);
                    i += 5 + length;
                }
                s.writeInbound(sent);
            }
            c.checkException();
            for (ChannelFuture f : promises) {
                assertTrue(f.isSuccess(), "each write's promise completes once sealed: " + f);
            }
            assertFalse(records.isEmpty());
            return new Run(records, received.toByteArray());
        } finally {
            region.release();
            c.finishAndReleaseAll();
            s.finishAndReleaseAll();
        }
    }

    private static final int REGION = 64 * 1024;
    /** Payload lengths per flush: four full FPDUs and a short one (a 64 KiB message), three messages, one alone. */
    private static final int[][] FLUSHES = {
        {16_356, 16_356, 16_356, 16_356, 112},
        {16_356, 16_356, 16_356, 16_356, 112, 16_356, 16_356, 16_356, 16_356, 112, 16_356, 16_356, 16_356, 16_356, 112},
        {100},
        {5_000, 7},
    };

    private static byte[] header(int length) {
        byte[] h = new byte[20];
        h[0] = (byte) (length >>> 8);
        h[1] = (byte) length;
        return h;
    }

    private static byte[] regionOctets() {
        byte[] b = new byte[REGION];
        new Random(28).nextBytes(b);
        return b;
    }

    /** The plaintext the writes of {@link #FLUSHES} make. */
    private static byte[] written() {
        byte[] region = regionOctets();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        for (int[] flush : FLUSHES) {
            for (int length : flush) {
                out.writeBytes(header(length));
                out.write(region, at, length);
                out.writeBytes(new byte[] {(byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8),
                        (byte) length});
                at = (at + length) % (REGION - 17_000);
            }
        }
        return out.toByteArray();
    }

    private static void move(EmbeddedChannel from, EmbeddedChannel to) {
        for (Object m = from.readOutbound(); m != null; m = from.readOutbound()) {
            to.writeInbound(m);
        }
        to.runPendingTasks();
        from.runPendingTasks();
    }
}
