package dev.iwarp.server;

import dev.iwarp.vitcp.ViRdmaHeader;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpCodec;
import dev.iwarp.server.wire.FramedMessages;
import dev.iwarp.server.wire.WireFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;

import java.util.function.BooleanSupplier;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guard's one timer per connection on a clock moved by hand: each limit fires at its value, not earlier, and an
 * idle connection's timer runs once per idle timeout, never periodically.
 */
class ConnectionGuardTimerTest {
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    /** An accepted connection from {@code address}, on a clock that moves only by hand. */
    private static final class Peer extends EmbeddedChannel {
        private final String address;
        final MockTicker clock;

        Peer(String address, MockTicker clock) {
            super(EmbeddedChannel.builder().register(false).hasDisconnect(false).ticker(clock));
            this.address = address;
            this.clock = clock;
        }

        @Override
        protected SocketAddress remoteAddress0() {
            return new InetSocketAddress(address, 40000);
        }
    }

    @AfterEach
    void close() {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
    }

    private static ConnectionGuard guard(long deadlineMs, long firstOctetMs, long drainSec, int tlsRate, long idleSec) {
        return new ConnectionGuard(new ServerLimits(0, 0, deadlineMs, 0, 24, 64, 0, firstOctetMs, drainSec, false,
                tlsRate), idleSec, new AggregatedLog(LoggerFactory.getLogger(ConnectionGuardTimerTest.class), 10,
                TimeUnit.SECONDS));
    }

    private EmbeddedChannel open(ConnectionGuard g, String address, boolean tls) throws Exception {
        Peer ch = new Peer(address, Ticker.newMockTicker());
        channels.add(ch);
        if (tls) {
            ch.pipeline().addLast(dev.iwarp.bootstrap.tls.TlsLayer.TLS, new ChannelInboundHandlerAdapter());
        }
        ch.pipeline().addLast("llp", new ChannelInboundHandlerAdapter());
        g.onAccept(ch);
        ch.register();
        return ch;
    }

    private static void advance(EmbeddedChannel ch, long ms) {
        ((Peer) ch).clock.advance(ms, TimeUnit.MILLISECONDS);
        ch.runPendingTasks();
    }

    @Test
    void aSilentSocketIsClosedAtTheFirstOctetTimeout() throws Exception {
        ConnectionGuard g = guard(0, 2_000, 0, 0, 0);
        EmbeddedChannel ch = open(g, "192.0.2.1", false);
        advance(ch, 1_999);
        assertTrue(ch.isOpen());
        advance(ch, 1);
        assertFalse(ch.isOpen());
        assertEquals(0, g.inStartup());
    }

    @Test
    void aFirstOctetStopsTheFirstOctetTimeout() throws Exception {
        ConnectionGuard g = guard(0, 2_000, 0, 0, 0);
        EmbeddedChannel ch = open(g, "192.0.2.1", false);
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {'M'}));
        advance(ch, 60_000);
        assertTrue(ch.isOpen());
    }

    @Test
    void outputUnwritableBeyondTheDrainTimeoutCloses() throws Exception {
        ConnectionGuard g = guard(0, 0, 30, 0, 0);
        EmbeddedChannel ch = open(g, "192.0.2.1", false);
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
        advance(ch, 0);
        assertFalse(ch.isWritable());
        advance(ch, 20_000);
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, true); // drained in time: the clock stops
        advance(ch, 0); // the writability event runs as a task
        advance(ch, 20_000);
        assertTrue(ch.isOpen());
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
        advance(ch, 0);
        advance(ch, 29_999);
        assertTrue(ch.isOpen());
        advance(ch, 1);
        assertFalse(ch.isOpen(), "unwritable for 30 s");
    }

    @Test
    void anIdleConnectionWakesItsEventLoopOncePerIdleTimeout() throws Exception {
        ConnectionGuard g = guard(10_000, 0, 0, 0, 60);
        EmbeddedChannel ch = open(g, "192.0.2.1", false);
        g.started(ch, "llp", WireFraming.MPA);
        for (int s = 1; s < 60; s++) {
            advance(ch, 1_000);
        }
        assertTrue(ch.isOpen());
        assertEquals(0, g.timerRuns(), "no timer ran in 59 s of an idle connection");
        advance(ch, 1_000);
        assertFalse(ch.isOpen(), "closed at the 60 s idle timeout");
        assertEquals(2, g.timerRuns(), "the timer, and its confirmation after one more I/O pass");
    }

    @Test
    void onlyMessagesThatMoveDataAreActivity() throws Exception {
        ConnectionGuard g = guard(0, 0, 0, 0, 60);
        EmbeddedChannel ch = open(g, "192.0.2.1", false);
        g.started(ch, "llp", WireFraming.MPA);
        advance(ch, 30_000);
        ch.writeInbound(ulpdu(0xC1, 0x40, 0)); // a zero-length Write
        advance(ch, 30_000);
        assertFalse(ch.isOpen(), "a zero-length Write is not activity");

        EmbeddedChannel busy = open(g, "192.0.2.2", false);
        g.started(busy, "llp", WireFraming.MPA);
        advance(busy, 30_000);
        busy.writeInbound(ulpdu(0xC1, 0x40, 1)); // a Write of one octet
        advance(busy, 59_999);
        assertTrue(busy.isOpen(), "a Write with payload is");
        advance(busy, 1);
        assertFalse(busy.isOpen());
        assertEquals(2 + 1 + 2, g.timerRuns(), "two runs per close (the second after an I/O pass), one more after "
                + "the activity");
    }

    /** {@code count} RDMA Write segments of {@code payload} octets each, with trailer CRCs, as one stream. */
    private static ByteBuf viWrites(int count, int payload) {
        EmbeddedChannel enc = new EmbeddedChannel(new VitcpCodec());
        ((VitcpCodec) enc.pipeline().first()).crcEnabled(true);
        ByteBuf stream = Unpooled.buffer();
        for (int i = 0; i < count; i++) {
            enc.writeOutbound(ViSegment.builder(ViSegmentType.RDMA_WRITE).endOfMessage(true).messageNumber(i + 1)
                    .rdmaHeader(new ViRdmaHeader(0, 1, payload)).build(Unpooled.buffer(payload).writeZero(payload)));
            ByteBuf b;
            while ((b = enc.readOutbound()) != null) {
                stream.writeBytes(b);
                b.release();
            }
        }
        enc.finishAndReleaseAll();
        return stream;
    }

    /**
     * A peer that streams faster than we read (a bench of RDMA Writes on a loaded server): every read completes a
     * segment and ends inside the next one, so some segment is always held. Each one arrives within the message
     * deadline; the deadline runs from the first octet of the segment held, not from the first read that left one.
     */
    @Test
    void aStreamWhoseReadsAlwaysEndInsideASegmentMeetsTheMessageDeadline() throws Exception {
        ConnectionGuard g = guard(10_000, 0, 0, 0, 0);
        EmbeddedChannel ch = open(g, "192.0.2.1", false);
        VitcpCodec codec = new VitcpCodec();
        codec.crcEnabled(true);
        ch.pipeline().addLast("vitcp", codec);
        g.started(ch, "vitcp", new FramedMessages() { // as serve's VI/TCP wire tells the guard
            @Override
            public BooleanSupplier partialMessage(ChannelPipeline p) {
                VitcpCodec c = p.get(VitcpCodec.class);
                return c == null ? null : c::holdsIncompleteSegment;
            }

            @Override
            public boolean movesData(Object msg) {
                return true;
            }
        });
        int segments = 40;
        ByteBuf stream = viWrites(segments, 1000);
        int segment = stream.readableBytes() / segments;
        // reads end half-way into segments 0, 1, 2, ...: each completes one segment and begins the next
        ch.writeInbound(stream.readRetainedSlice(segment / 2));
        for (int i = 1; i < segments; i++) {
            advance(ch, 1_000);
            assertTrue(ch.isOpen(), "closed after " + i + " s of segments each complete within 1 s");
            ch.writeInbound(stream.readRetainedSlice(segment));
        }
        assertEquals(segments - 1, ch.inboundMessages().size(), "a segment completed in every read");
        advance(ch, 9_999);
        assertTrue(ch.isOpen());
        advance(ch, 1);
        assertFalse(ch.isOpen(), "the last segment, held 10 s, hit the deadline");
        stream.release();
    }

    /**
     * An accepted connection is active when its pipeline is built, so MPA's startup timer is armed in its
     * handlerAdded, before channelActive reaches the guard: a loop that is slow between the two (a loaded machine)
     * must not make the guard see the timer's close as early and leave it uncounted.
     */
    @Test
    void aStartupTimerArmedBeforeChannelActiveIsCountedAsTheStartupTimeout() throws Exception {
        ConnectionGuard g = new ConnectionGuard(ServerLimits.none(), 0, 300, new AggregatedLog(
                LoggerFactory.getLogger(ConnectionGuardTimerTest.class), 10, TimeUnit.SECONDS));
        MockTicker clock = Ticker.newMockTicker();
        Peer ch = new Peer("192.0.2.1", clock);
        channels.add(ch);
        ch.pipeline().addLast(new io.netty.channel.ChannelInitializer<io.netty.channel.Channel>() {
            @Override
            protected void initChannel(io.netty.channel.Channel c) {
                g.onAccept(c); // as serve's listener does, before the framing
                c.pipeline().addLast(new dev.iwarp.mpa.MpaStartupHandler(dev.iwarp.mpa.MpaRole.RESPONDER,
                        dev.iwarp.mpa.MpaSettings.builder().startupTimeout(300, TimeUnit.MILLISECONDS).build()));
                c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRegistered(io.netty.channel.ChannelHandlerContext ctx) {
                        clock.advance(50, TimeUnit.MILLISECONDS); // the loop busy between registration and activation
                        ctx.fireChannelRegistered();
                    }
                });
            }
        });
        ch.register();
        assertEquals(1, g.inStartup());
        advance(ch, 249);
        assertTrue(ch.isOpen());
        advance(ch, 1); // 300 ms after the accept: MPA's timer closes it
        assertFalse(ch.isOpen(), "MPA's startup timer closed it");
        ch.runPendingTasks();
        assertEquals(0, g.inStartup());
        assertEquals(1, g.refused(RefusalCause.STARTUP_TIMEOUT), "counted as closed by the startup timeout");
    }

    @Test
    void tlsHandshakesPerPrefixAreRateLimited() throws Exception {
        ConnectionGuard g = guard(0, 0, 0, 5, 0);
        for (int i = 0; i < 5; i++) {
            assertTrue(open(g, "192.0.2." + (1 + i), true).isOpen());
        }
        assertFalse(open(g, "192.0.2.77", true).isOpen(), "a sixth handshake from 192.0.2.0/24 within a second");
        assertTrue(open(g, "198.51.100.1", true).isOpen(), "another prefix is not affected");
        assertTrue(open(g, "192.0.2.78", false).isOpen(), "nor are connections without TLS");
        assertEquals(1, g.refused());
    }

    private static ByteBuf ulpdu(int ddp, int rdmap, int payload) {
        int header = (ddp & 0x80) != 0 ? 14 : 18;
        ByteBuf b = Unpooled.buffer(header + payload);
        b.writeByte(ddp).writeByte(rdmap).writeZero(header - 2 + payload);
        return b;
    }

    /** Known answers: which DDP segments move data (RFC 5040 §4, RFC 5041 §4). */
    @Test
    void movesDataKnownAnswers() {
        assertFalse(moves(ulpdu(0xC1, 0x40, 0)), "zero-length RDMA Write");
        assertTrue(moves(ulpdu(0xC1, 0x40, 1)), "RDMA Write of 1 octet");
        assertFalse(moves(ulpdu(0x41, 0x43, 0)), "empty Send");
        assertTrue(moves(ulpdu(0x41, 0x43, 16)), "Send of 16 octets");
        ByteBuf readZero = ulpdu(0x41, 0x41, 28);
        assertFalse(moves(readZero), "Read Request of 0 octets");
        ByteBuf read = ulpdu(0x41, 0x41, 28);
        read.setInt(30, 4096);
        assertTrue(moves(read), "Read Request of 4096 octets");
        assertFalse(moves(Unpooled.wrappedBuffer(new byte[] {1})), "shorter than any header");
    }

    private static boolean moves(ByteBuf b) {
        try {
            return WireFraming.MPA.movesData(b);
        } finally {
            b.release();
        }
    }
}
