package dev.iwarp.bootstrap.tls;

import dev.iwarp.mpa.MpaIrdOrd;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.testkit.Splits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The first-record check over every split of its input: TLS passes untouched, plaintext MPA is named and answered. */
class TlsFirstRecordCheckTest {
    /** The start of a TLS 1.3 ClientHello record (RFC 8446 §5.1: handshake, legacy version 3.1). */
    private static final byte[] CLIENT_HELLO = {0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00};

    private static final class Seen extends ChannelInboundHandlerAdapter {
        final List<Throwable> errors = new ArrayList<>();

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            errors.add(cause);
        }
    }

    private static byte[] mpaRequest(int revision, boolean enhanced) {
        MpaStartupFrame.Builder b = MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST).revision(revision).crc(true);
        if (enhanced) {
            b.reserved(0x10).irdOrd(MpaIrdOrd.of(16, 16));
        }
        ByteBuf buf = Unpooled.buffer();
        b.build().encode(buf);
        byte[] out = ByteBufUtil.getBytes(buf);
        buf.release();
        return out;
    }

    @Test
    void aTlsRecordPassesThroughAtEverySplit() {
        for (byte[][] split : Splits.everyTwoWaySplit(CLIENT_HELLO)) {
            Seen seen = new Seen();
            EmbeddedChannel ch = new EmbeddedChannel(new TlsFirstRecordCheck(true), seen);
            for (byte[] piece : split) {
                ch.writeInbound(Unpooled.wrappedBuffer(piece));
            }
            ByteBuf all = Unpooled.buffer();
            for (ByteBuf b; (b = ch.readInbound()) != null; ) {
                all.writeBytes(b);
                b.release();
            }
            assertArrayEquals(CLIENT_HELLO, ByteBufUtil.getBytes(all));
            all.release();
            assertTrue(seen.errors.isEmpty());
            assertNull(ch.pipeline().get(TlsFirstRecordCheck.class), "removed itself");
            assertFalse(ch.finish());
        }
    }

    @Test
    void aPlaintextMpaRequestIsRejectedInItsOwnRevisionAtEverySplit() {
        for (boolean enhanced : new boolean[] {false, true}) {
            byte[] request = mpaRequest(enhanced ? 2 : 1, enhanced);
            for (byte[][] split : Splits.everyTwoWaySplit(request)) {
                Seen seen = new Seen();
                EmbeddedChannel ch = new EmbeddedChannel(new TlsFirstRecordCheck(true), seen);
                for (byte[] piece : split) {
                    if (ch.isOpen()) { // it closes once it saw the 20-octet header
                        ch.writeInbound(Unpooled.wrappedBuffer(piece));
                    }
                }
                assertEquals(1, seen.errors.size());
                TlsException e = (TlsException) seen.errors.get(0);
                assertEquals(TlsException.Kind.NOT_TLS, e.kind());
                assertTrue(e.getMessage().contains("plaintext MPA Request"), e.getMessage());
                ByteBuf out = ch.readOutbound();
                MpaStartupFrame reply = MpaStartupFrame.decode(out, 512);
                out.release();
                assertEquals(MpaStartupFrame.Type.REPLY, reply.type());
                assertTrue(reply.rejected());
                assertEquals(enhanced ? 2 : 1, reply.revision());
                assertEquals(enhanced, reply.enhanced());
                assertTrue(new String(reply.ulpPrivateData()).startsWith("TLS required"));
                assertFalse(ch.isOpen(), "closed after the Reply");
                ch.finishAndReleaseAll();
            }
        }
    }

    @Test
    void otherOctetsAreNamedInHex() {
        Seen seen = new Seen();
        EmbeddedChannel ch = new EmbeddedChannel(new TlsFirstRecordCheck(false), seen);
        ch.writeInbound(Unpooled.wrappedBuffer("GET / HTTP/1.1\r\n".getBytes()));
        assertEquals(1, seen.errors.size());
        assertTrue(seen.errors.get(0).getMessage().contains("(474554202f204854) are not a TLS record"),
                seen.errors.get(0).getMessage());
        assertFalse(ch.isOpen());
        assertNull(ch.readOutbound(), "nothing answered");
        ch.finishAndReleaseAll();
    }
}
