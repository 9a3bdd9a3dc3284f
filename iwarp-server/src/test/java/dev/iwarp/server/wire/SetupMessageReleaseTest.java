package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.ift.IftSettings;

import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.CompletionView;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;
import dev.iwarp.verbs.internal.VerbsAccess;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Over IFT serve's setup data travels as its first Send: once that Send completed, an idle connection keeps
 * nothing of it (no message object, region or buffer, no listener on the connection's close), while the
 * connection stays open.
 */
class SetupMessageReleaseTest {
    private static final byte[] ADVERTISEMENT = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

    @Test
    void nodeBKeepsNothingOfItsSetupSendOnceItCompleted() throws Exception {
        IftFraming ift = IftFraming.of(IftSettings.builder().build());
        try (IwarpStack stack = IwarpStack.builder().threads(1).build();
             ServerWire server = IwarpWire.server(stack, ListenOptions.of(ift), false)) {
            CompletableFuture<IwarpWire.Connection> accepted = new CompletableFuture<>();
            WireDomain serverDomain = server.allocDomain();
            try (ServerWire.Listener l = server.listen(new InetSocketAddress("127.0.0.1", 0), r -> accepted.complete(
                    (IwarpWire.Connection) r.accept(serverDomain, (wrId, receive, success, length, status) -> { },
                            ADVERTISEMENT)))) {
                ClientWire client = IwarpWire.client(stack, ift);
                WireConnection nodeA = client.connect(l.localAddress(), client.allocDomain(), false, 1,
                        (wrId, receive, success, length, status) -> { }, c -> { }, 10_000);
                assertArrayEquals(ADVERTISEMENT, nodeA.peerData(), "node A received the setup message");

                IwarpWire.Connection nodeB = accepted.get(10, TimeUnit.SECONDS);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (nodeB.setup != null && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertNull(nodeB.setup, "the connection drops its setup message once the Send completed");
                assertTrue(nodeB.channel().isOpen(), "the connection stays open");
                assertEquals(0, VerbsAccess.get().taggedBufferTable(stack.device()).size(),
                        "no region left registered for the setup message on either node");
                nodeA.channel().close().sync();
            }
        }
    }

    @Test
    void aCompletedSetupSendIsHeldByNothingWhileTheConnectionIsOpen() throws Exception {
        RdmaDevice device = new RdmaDevice();
        ProtectionDomain pd = device.allocPd();
        RdmaEngine engine = new RdmaEngine(pd, new CompletionQueue(), new CompletionQueue());
        EmbeddedChannel ch = new EmbeddedChannel(engine);
        SetupMessage s = SetupMessage.send(pd, engine.queuePair(), ADVERTISEMENT);
        assertEquals(1, VerbsAccess.get().taggedBufferTable(device).size(),
                "the setup message's region, registered for its Send");
        WeakReference<SetupMessage> ref = new WeakReference<>(s);
        assertTrue(s.consume(sendCompleted()), "the setup Send's completion is the setup message's");
        s = null;
        assertEquals(0, VerbsAccess.get().taggedBufferTable(device).size(),
                "its region deregistered once the Send completed");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ref.get() != null && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(ref.get(), "nothing holds the completed setup message (no listener on the close future)");
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    /** The successful completion of the setup Send. */
    private static CompletionView sendCompleted() {
        return new CompletionView() {
            @Override
            public long wrId() {
                return SetupMessage.WR_ID;
            }

            @Override
            public WcStatus status() {
                return WcStatus.SUCCESS;
            }

            @Override
            public WcOpcode opcode() {
                return WcOpcode.SEND;
            }

            @Override
            public int byteLength() {
                return ADVERTISEMENT.length;
            }

            @Override
            public boolean hasInvalidatedStag() {
                return false;
            }

            @Override
            public int invalidatedStag() {
                return 0;
            }

            @Override
            public long immediateData() {
                return 0;
            }

            @Override
            public boolean solicited() {
                return false;
            }

            @Override
            public String detail() {
                return "";
            }

            @Override
            public Completion toCompletion() {
                throw new UnsupportedOperationException("not kept");
            }
        };
    }
}
