package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The PSK adapter between two embedded channels: what is written before the handshake travels encrypted. */
class PskTlsHandlerTest {
    private static final TlsSettings PSK = TlsFixtures.psk(TlsFixtures.PSK);

    /** Moves octets both ways until neither side has more; returns what the client put on the wire. */
    private static byte[] shuttle(EmbeddedChannel client, EmbeddedChannel server) {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        boolean moved = true;
        while (moved) {
            moved = false;
            for (ByteBuf b; (b = client.readOutbound()) != null; moved = true) {
                wire.writeBytes(ByteBufUtil.getBytes(b));
                deliver(server, b);
            }
            for (ByteBuf b; (b = server.readOutbound()) != null; moved = true) {
                deliver(client, b);
            }
        }
        return wire.toByteArray();
    }

    private static void deliver(EmbeddedChannel to, ByteBuf b) {
        if (to.isOpen()) {
            to.writeInbound(b);
        } else {
            b.release(); // the answer to our close_notify, after we closed
        }
    }

    @Test
    void dataWrittenBeforeTheHandshakeIsEncryptedAndArrives() {
        EmbeddedChannel client = new EmbeddedChannel(new PskTlsHandler(PSK, true));
        EmbeddedChannel server = new EmbeddedChannel(new PskTlsHandler(PSK, false));
        client.writeOutbound(Unpooled.copiedBuffer("written-before-the-handshake", StandardCharsets.US_ASCII));
        byte[] wire = shuttle(client, server);
        assertFalse(new String(wire, StandardCharsets.ISO_8859_1).contains("written-before"), "plaintext on the wire");
        StringBuilder got = new StringBuilder();
        for (ByteBuf b; (b = server.readInbound()) != null; ) {
            got.append(b.toString(StandardCharsets.US_ASCII));
            b.release();
        }
        assertEquals("written-before-the-handshake", got.toString());
        client.writeOutbound(Unpooled.copiedBuffer("and after", StandardCharsets.US_ASCII));
        shuttle(client, server);
        ByteBuf after = server.readInbound();
        assertEquals("and after", after.toString(StandardCharsets.US_ASCII));
        after.release();
        PskTlsHandler serverTls = server.pipeline().get(PskTlsHandler.class);
        client.close();
        shuttle(client, server);
        assertTrue(serverTls.closeNotifyFuture().isSuccess(), "close_notify received");
        assertFalse(server.isOpen(), "the peer's close_notify ends the connection, as a FIN ends a plain one");
        client.finishAndReleaseAll();
        server.finishAndReleaseAll();
    }

    /**
     * A graceful close's first step inside TLS: our close_notify goes out and the connection stays open for the
     * peer's answer (RFC 8446 §6.1), never a bare TCP FIN the peer would take for a truncation.
     */
    @Test
    void closeOutboundSendsCloseNotifyAndKeepsTheConnectionOpen() {
        EmbeddedChannel client = new EmbeddedChannel(new PskTlsHandler(PSK, true));
        EmbeddedChannel server = new EmbeddedChannel(new PskTlsHandler(PSK, false));
        shuttle(client, server);
        PskTlsHandler serverTls = server.pipeline().get(PskTlsHandler.class);
        assertTrue(TlsLayer.closeOutbound(client).isSuccess(), "the alert was written");
        assertTrue(client.isOpen(), "open until the peer answers");
        shuttle(client, server);
        assertTrue(serverTls.closeNotifyFuture().isSuccess(), "close_notify received");
        assertFalse(server.isOpen(), "the peer closed at our close_notify, after answering it");
        assertTrue(client.isOpen(), "its answer was discarded quietly: the graceful close waits for the peer's FIN");
        client.finishAndReleaseAll();
        server.finishAndReleaseAll();
    }
}
