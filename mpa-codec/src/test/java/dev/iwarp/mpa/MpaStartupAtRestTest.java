package dev.iwarp.mpa;

import dev.iwarp.testkit.BackToBack;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.lang.ref.WeakReference;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory at rest: once the framer took over, nothing used only during startup (the handler, the Request
 * and Reply and their private data) stays reachable from the connection, and the parameters a connection
 * keeps for its lifetime carry every negotiated value but not the frames.
 */
class MpaStartupAtRestTest {

    private static MpaSettings enhanced(String privateData) {
        return MpaSettings.builder().revision(2).ird(3).ord(5)
                .privateData(privateData.getBytes(StandardCharsets.US_ASCII)).build();
    }

    @Test
    void parametersWithoutStartupFramesKeepEveryNegotiatedValue() {
        MpaPair pair = new MpaPair(enhanced("hello"), enhanced("welcome"),
                req -> req.accept("welcome".getBytes(StandardCharsets.US_ASCII)));
        try {
            pair.pump();
            for (MpaPair.Recorder app : new MpaPair.Recorder[] {pair.initiatorApp, pair.responderApp}) {
                MpaParameters full = app.completion.parameters();
                assertTrue(full.hasStartupFrames());
                MpaParameters rest = full.withoutStartupFrames();
                assertFalse(rest.hasStartupFrames());
                assertSame(rest, rest.withoutStartupFrames());
                assertEquals(full.role(), rest.role());
                assertEquals(full.revision(), rest.revision());
                assertEquals(full.crc(), rest.crc());
                assertEquals(full.markersTx(), rest.markersTx());
                assertEquals(full.markersRx(), rest.markersRx());
                assertEquals(full.ird(), rest.ird());
                assertEquals(full.ord(), rest.ord());
                assertTrue(full.enhanced(), "RFC 6581 words exchanged");
                assertEquals(full.enhanced(), rest.enhanced());
                assertEquals(full.peerIrd(), rest.peerIrd());
                assertEquals(full.peerOrd(), rest.peerOrd());
                assertTrue(rest.peerIrd() >= 0 && rest.peerOrd() >= 0, "the peer's RFC 6581 words kept");
                assertEquals(full.rtrType(), rest.rtrType());
                assertEquals(full.mulpdu(), rest.mulpdu());
                assertEquals(full.maxUlpduLength(), rest.maxUlpduLength());
                assertEquals(full.holdTxUntilFirstFpdu(), rest.holdTxUntilFirstFpdu());
                assertEquals(full.toString(), rest.toString());
                assertThrows(IllegalStateException.class, rest::request);
                assertThrows(IllegalStateException.class, rest::reply);
                assertThrows(IllegalStateException.class, rest::peerFrame);
                assertThrows(IllegalStateException.class, rest::localFrame);
                assertThrows(IllegalStateException.class, rest::peerPrivateData);
            }
            assertArrayEquals("welcome".getBytes(StandardCharsets.US_ASCII),
                    pair.initiatorApp.completion.parameters().peerPrivateData());
        } finally {
            pair.finish();
        }
    }

    /** Keeps nothing of the startup but weak references to its frames. */
    private static final class WeakRecorder extends ChannelInboundHandlerAdapter {
        WeakReference<MpaStartupFrame> request;
        WeakReference<MpaStartupFrame> reply;

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaConnectRequest) {
                ((MpaConnectRequest) evt).accept();
            } else if (evt instanceof MpaStartupCompletionEvent) {
                MpaParameters p = ((MpaStartupCompletionEvent) evt).parameters();
                request = new WeakReference<>(p.request());
                reply = new WeakReference<>(p.reply());
            }
        }
    }

    @Test
    void startupHandlerAndFramesAreUnreachableFromAnEstablishedConnection() throws InterruptedException {
        WeakRecorder initiatorApp = new WeakRecorder();
        WeakRecorder responderApp = new WeakRecorder();
        EmbeddedChannel responder = new EmbeddedChannel(MpaStartupHandler.responder(enhanced("r")), responderApp);
        EmbeddedChannel initiator = new EmbeddedChannel(MpaStartupHandler.initiator(enhanced("i")), initiatorApp);
        WeakReference<MpaStartupHandler> handler = new WeakReference<>(initiator.pipeline().get(MpaStartupHandler.class));
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try {
            for (int round = 0; round < 100; round++) {
                initiator.runPendingTasks();
                responder.runPendingTasks();
                if (!(BackToBack.move(initiator, responder, sink) | BackToBack.move(responder, initiator, sink))) {
                    break;
                }
            }
            for (EmbeddedChannel ch : new EmbeddedChannel[] {initiator, responder}) {
                assertNull(ch.pipeline().get(MpaStartupHandler.class), "the startup handler removed itself");
                assertNotNull(ch.pipeline().get(MpaFramer.class), "the framer took over");
            }
            assertNotNull(initiatorApp.request, "startup completed");
            for (int i = 0; i < 50 && (handler.get() != null || initiatorApp.request.get() != null
                    || initiatorApp.reply.get() != null || responderApp.request.get() != null
                    || responderApp.reply.get() != null); i++) {
                System.gc();
                Thread.sleep(20);
            }
            assertNull(handler.get(), "the startup handler is unreferenced");
            assertNull(initiatorApp.request.get(), "initiator's Request unreferenced");
            assertNull(initiatorApp.reply.get(), "initiator's Reply unreferenced");
            assertNull(responderApp.request.get(), "responder's Request unreferenced");
            assertNull(responderApp.reply.get(), "responder's Reply unreferenced");
            assertTrue(initiator.isOpen() && responder.isOpen(), "both connections still held and open");
        } finally {
            initiator.finishAndReleaseAll();
            responder.finishAndReleaseAll();
        }
    }
}
