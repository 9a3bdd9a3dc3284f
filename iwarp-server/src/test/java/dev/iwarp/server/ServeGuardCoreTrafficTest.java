package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpPipeline;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.rdmap.engine.RdmaEngine;
import dev.iwarp.server.wire.EmbeddedServerWire;
import dev.iwarp.testkit.BackToBack;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * serve's guard over traffic that reaches the RDMA core straight from MPA's framer (none of it passes the guard's mark
 * in the pipeline): Writes and Reads are still activity for the idle timeout, and FPDUs each complete in the read
 * that ends inside the next one still meet the message deadline. The server is serve's whole accept path (guard, MPA
 * Responder, RDMA core, rping session) on an {@link EmbeddedChannel} whose clock the test moves, so a loaded machine
 * cannot stretch the time between two messages past a limit.
 */
class ServeGuardCoreTrafficTest {
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final MockTicker clock = Ticker.newMockTicker();

    @AfterEach
    void tearDown() throws Exception {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** serve with a 64 KiB target per connection, {@code limits} and an idle timeout of {@code idleSec}. */
    private EmbeddedServerWire serve(ServerLimits limits, long idleSec, List<RpingServer> started) throws Exception {
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0).withTargetSize(65536)
                .withLimits(1024, 60_000, idleSec).withLimits(limits);
        EmbeddedServerWire wire = new EmbeddedServerWire(MpaFraming.of(ServerMpaOptions.defaults().settings(config)));
        RpingServer s = RpingServer.start(config, ServeOptions.on(wire));
        closeables.add(s);
        started.add(s);
        return wire;
    }

    /** A connection from 127.0.0.1 accepted by {@code wire}, on the test's clock. */
    private EmbeddedChannel accepted(EmbeddedServerWire wire) throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(EmbeddedChannel.builder().register(false).hasDisconnect(false)
                .ticker(clock)) {
            @Override
            protected SocketAddress remoteAddress0() {
                return new InetSocketAddress("127.0.0.1", 40000);
            }
        };
        channels.add(ch);
        wire.accept(ch);
        return ch;
    }

    /** Moves the server's clock by {@code ms} and runs what fell due. */
    private void advance(EmbeddedChannel server, long ms) {
        clock.advance(ms, TimeUnit.MILLISECONDS);
        server.runPendingTasks();
        server.runPendingTasks(); // a limit found expired is looked at again after one more pass
    }

    /**
     * A connection moving data for three idle timeouts stays open; it was closed at the first ("moved no data for
     * 1 s") while 64 KiB Writes placed hundreds of MB. Once the data stops, the idle timeout closes it.
     */
    @Test
    void writesAndReadsThatReachTheCoreDirectlyAreActivity() throws Exception {
        List<RpingServer> started = new ArrayList<>();
        EmbeddedServerWire wire = serve(ServerLimits.defaults(), 1, started); // idle timeout 1 s
        RpingServer s = started.get(0);
        RdmaDevice device = new RdmaDevice();
        closeables.add(device);
        ProtectionDomain pd = device.allocPd();
        CompletionQueue sendCq = new CompletionQueue();
        RdmaEngine engine = new RdmaEngine(pd, sendCq, new CompletionQueue());
        EmbeddedChannel client = EmbeddedChannel.builder().ticker(Ticker.newMockTicker())
                .handlers(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel c) { // as IwarpStack.connect builds it, with MPA's defaults
                        IwarpPipeline.addInitiator(c.pipeline(), MpaFraming.of(MpaSettings.defaults()));
                        IwarpPipeline.bindEngine(c.pipeline(), engine);
                    }
                }).build();
        channels.add(client);
        EmbeddedChannel server = accepted(wire);
        BackToBack.pump(client, server, null, null);
        QueuePair qp = engine.queuePair();
        assertTrue(qp.established().isSuccess(), "connected");
        Advertisement target = Advertisement.decode(qp.connectionParameters().peerPrivateData());
        ByteBuf source = Unpooled.directBuffer(65536, 65536).writeZero(65536);
        ByteBuf sink = Unpooled.directBuffer(1024, 1024);
        try {
            MemoryRegion from = pd.register(source);
            MemoryRegion into = pd.register(sink, Access.LOCAL_WRITE);
            int ops = 0;
            for (int ms = 0; ms < 3_000; ms += 200) { // one Write of 64 KiB (read straight into the target) and a Read
                qp.postSend(SendRequest.rdmaWrite(ops++, from.all(), target.stag(), target.to()));
                qp.postSend(SendRequest.rdmaRead(ops++, into.all(), target.stag(), target.to()));
                BackToBack.pump(client, server, null, null);
                for (int i = 0; i < 2; i++) {
                    Completion c = sendCq.poll();
                    assertNotNull(c, "no completion");
                    assertTrue(c.isSuccess(), () -> c + " after " + s.sessions() + "; the server closed a busy connection");
                }
                advance(server, 200);
                assertTrue(server.isOpen(), "closed after " + (ms + 200) + " ms of Writes and Reads");
            }
            assertEquals(1, s.sessions().size(), "the session is still open after 3 s of Writes and Reads");
            for (int ms = 0; ms < 2_000 && server.isOpen(); ms += 100) {
                advance(server, 100);
            }
            assertFalse(server.isOpen(), "a session that stopped moving data is closed by the idle timeout");
            BackToBack.pump(client, server, null, null);
        } finally {
            source.release();
            sink.release();
        }
    }

    /**
     * A peer streaming RDMA Writes whose every read ends inside an FPDU meets the message deadline: each read completes
     * an FPDU, so the one held began in that read. The deadline counted the whole stream and closed it after 1 s. Once
     * the stream stops inside an FPDU, the deadline closes it.
     */
    @Test
    void aStreamWhoseReadsEndInsideFpdusThatReachTheCoreDirectlyMeetsTheDeadline() throws Exception {
        List<RpingServer> started = new ArrayList<>();
        EmbeddedServerWire wire = serve(new ServerLimits(0, 0, 1000, 0), 0, started); // deadline 1000 ms, no idle
        RpingServer s = started.get(0);
        EmbeddedChannel server = accepted(wire);
        server.writeInbound(Unpooled.copiedBuffer("MPA ID Req Frame", StandardCharsets.US_ASCII),
                Unpooled.wrappedBuffer(new byte[] {0, 1, 0, 0})); // Rev 1, no markers, no CRC, no Private Data
        ByteBuf reply = Unpooled.buffer();
        for (ByteBuf b; (b = server.readOutbound()) != null; b.release()) {
            reply.writeBytes(b);
        }
        byte[] replyOctets = new byte[reply.readableBytes()];
        reply.readBytes(replyOctets).release();
        assertEquals("MPA ID Rep Frame", new String(replyOctets, 0, 16, StandardCharsets.US_ASCII));
        int pdLength = ((replyOctets[18] & 0xFF) << 8) | (replyOctets[19] & 0xFF);
        Advertisement target = Advertisement.decode(java.util.Arrays.copyOfRange(replyOctets, 20, 20 + pdLength));
        int payload = 1000;
        byte[] fpdu = new byte[2 + 14 + payload + 4]; // RFC 5044 §4.1: 1016 octets need no pad; CRC field unused
        fpdu[0] = (byte) ((14 + payload) >>> 8);
        fpdu[1] = (byte) (14 + payload);
        fpdu[2] = (byte) 0xC1; // RFC 5041 §4.2: tagged, last, DDP version 1
        fpdu[3] = 0x40; // RFC 5040 §4.3: RDMAP version 1, RDMA Write
        for (int i = 0; i < 4; i++) {
            fpdu[4 + i] = (byte) (target.stag() >>> (24 - 8 * i));
        }
        for (int i = 0; i < 8; i++) {
            fpdu[8 + i] = (byte) (target.to() >>> (56 - 8 * i));
        }
        byte[] stream = new byte[fpdu.length * 100];
        for (int i = 0; i < 100; i++) {
            System.arraycopy(fpdu, 0, stream, i * fpdu.length, fpdu.length);
        }
        int chunk = 1537; // 1.5 FPDUs and some: no read ends on an FPDU boundary (gcd(1537, 1020) = 1)
        int ms = 0;
        for (int at = 0; at + chunk <= stream.length; at += chunk) { // 66 reads, one per 40 ms: 2.64 s
            server.writeInbound(Unpooled.wrappedBuffer(stream, at, chunk));
            advance(server, 40);
            ms += 40;
            assertTrue(server.isOpen(), "closed by the message deadline after " + ms + " ms of FPDUs, each read "
                    + "ending inside one and each FPDU complete within 40 ms");
        }
        assertEquals(1, s.sessions().size());
        advance(server, 959); // the last FPDU, begun in the last read 40 ms ago, is held 999 ms
        assertTrue(server.isOpen());
        advance(server, 1);
        assertFalse(server.isOpen(), "the last FPDU, held 1000 ms, hit the deadline");
    }
}
