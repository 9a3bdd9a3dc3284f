package dev.iwarp.server;

import dev.iwarp.server.wire.WireFraming;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;

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
