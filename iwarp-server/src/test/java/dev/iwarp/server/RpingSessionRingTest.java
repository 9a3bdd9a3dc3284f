package dev.iwarp.server;

import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireCompletionListener;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * serve's echoes, pipelined (a bench hello's ring) and plain, when the transport reports a Send's completion late.
 * The client sends its next Send as soon as it holds an echo, and io_uring can report the echo's completion after
 * that Send arrived: the granted receives must stay posted meanwhile, else the Send finds none (DDP Terminate
 * 1/2/0x02, RFC 5041 §7.2). Here a connection that places Sends into receives in posting order (as DDP matches MSNs) and
 * reports the echoes' completions {@code lag} echoes late (io_uring was seen dozens late; 1000: only when the client
 * is blocked). With the receive re-posted only when its echo completed, a lag of one already left a Send without a
 * receive; with spare slots alone, a lag beyond them did.
 */
class RpingSessionRingTest {
    private static final int SIZE = 64;
    private static final int DEPTH = 4;

    @ParameterizedTest(name = "echo completions reported {0} echoes late")
    @ValueSource(ints = {0, 1, DEPTH - 1, DEPTH, 2 * DEPTH, 1000})
    void theGrantedReceivesStayPostedWhileEchoesAreOnTheirWay(int lag) {
        Fake conn = new Fake();
        RpingSession session = new RpingSession(conn, conn.alloc);
        conn.listener = session;
        session.start(conn);
        Posted first = conn.recvs.poll();
        BenchHello.writeRequest(first.region.memory(), first.offset, SIZE, DEPTH);
        session.completed(first.wrId, true, true, BenchHello.LENGTH, null);
        Posted answer = conn.sends.poll();
        assertTrue(BenchHello.isAnswer(answer.region.memory(), answer.offset, answer.length));
        assertEquals(DEPTH, BenchHello.depth(answer.region.memory(), answer.offset));
        session.completed(answer.wrId, false, true, answer.length, null);
        assertEquals(DEPTH, conn.recvs.size(), "the granted receives");

        long sent = 0; // the client's Sends
        long echoed = 0; // echoes serve posted: the client holds them (their completion may not be reported yet)
        long completed = 0; // echoes whose completion serve was told
        for (int step = 0; sent < 400; step++) {
            assertTrue(step < 10_000, "no progress: " + sent + " Sends, " + echoed + " echoes");
            if (sent - echoed < DEPTH) { // the client sends once it holds the echo DEPTH Sends back
                Posted r = conn.recvs.poll();
                assertTrue(r != null, "Send " + sent + " found no receive (" + (echoed - completed)
                        + " echoes not completed)");
                r.region.memory().setLong(r.offset, sent);
                r.region.memory().setLong(r.offset + 8, ~sent);
                session.completed(r.wrId, true, true, SIZE, null);
                sent++;
                echoed = completed + conn.sends.size();
                // up to DEPTH - 1 late completions every replacement finds a spare slot at once
                if (lag < DEPTH) {
                    assertEquals(DEPTH, conn.recvs.size(), "after Send " + sent);
                }
            }
            // the transport reports completions lag echoes late; a blocked client means it must report one
            while (echoed - completed > lag || sent - echoed == DEPTH && echoed > completed) {
                Posted echo = conn.sends.poll();
                // echoes leave in order, from a slot nothing was placed into since
                assertEquals(completed, echo.region.memory().getLong(echo.offset), "echo of Send " + completed);
                assertEquals(~completed, echo.region.memory().getLong(echo.offset + 8), "echo of Send " + completed);
                session.completed(echo.wrId, false, true, echo.length, null);
                completed++;
                echoed = completed + conn.sends.size();
            }
        }
        while (!conn.sends.isEmpty() || completed < 400) { // the rest, held ones included, as completions come
            Posted echo = conn.sends.poll();
            assertEquals(completed, echo.region.memory().getLong(echo.offset), "echo of Send " + completed);
            session.completed(echo.wrId, false, true, echo.length, null);
            completed++;
        }
        assertEquals(400, session.echoes());
        assertEquals(DEPTH, conn.recvs.size(), "the granted receives, posted again");
        conn.channel.close();
        assertTrue(conn.allReleased(), "ring, answer and session buffers released at close");
    }

    /**
     * A Send echoed without a ring ({@code serve --echo}, or a Send of no other meaning): the one receive stays
     * posted while the echo is on its way, and the echo's source stays as it was until its completion, however late
     * the transport reports it. The client sends its next Send once it holds the echo (depth 1). With the receive
     * re-posted only when the echo completed, the second Send found none.
     */
    @ParameterizedTest(name = "plain echoes, completions reported {0} echoes late, --echo {1}")
    @CsvSource({"0, true", "1, true", "3, true", "1, false"})
    void aPlainEchoKeepsTheReceivePosted(int lag, boolean echoOnly) {
        Fake conn = new Fake();
        RpingSession session = new RpingSession(conn, conn.alloc, echoOnly);
        session.start(conn);
        ArrayDeque<Posted> late = new ArrayDeque<>(); // echoes the client holds, their completion not reported yet
        ArrayDeque<Long> lateSend = new ArrayDeque<>(); // the Send each of them echoes
        for (long k = 0; k < 50; k++) {
            assertEquals(1, conn.recvs.size(), "receives posted when Send " + k + " arrives ("
                    + late.size() + " echo completions not reported yet)");
            Posted r = conn.recvs.poll();
            r.region.memory().setLong(r.offset, k);
            r.region.memory().setLong(r.offset + 8, ~k);
            session.completed(r.wrId, true, true, 100, null);
            while (conn.sends.isEmpty()) { // the echo waits for a completion: the transport reports the oldest
                assertTrue(!late.isEmpty(), "the echo of Send " + k + " neither sent nor waiting for a completion");
                complete(session, late.poll(), lateSend.poll());
            }
            Posted echo = conn.sends.poll();
            assertEquals(100, echo.length);
            late.add(echo);
            lateSend.add(k);
            while (late.size() > lag) {
                complete(session, late.poll(), lateSend.poll());
            }
        }
        while (!late.isEmpty()) {
            complete(session, late.poll(), lateSend.poll());
        }
        assertEquals(50, session.echoes());
        assertEquals(1, conn.recvs.size(), "the receive, posted");
        conn.channel.close();
        assertTrue(conn.allReleased(), "both receive buffers released at close");
    }

    /** Reports {@code echo}'s completion after checking it still carries Send {@code send} (its source unchanged). */
    private static void complete(RpingSession session, Posted echo, long send) {
        assertEquals(send, echo.region.memory().getLong(echo.offset), "echo of Send " + send);
        assertEquals(~send, echo.region.memory().getLong(echo.offset + 8), "echo of Send " + send);
        session.completed(echo.wrId, false, true, echo.length, null);
    }

    private record Posted(long wrId, WireRegion region, int offset, int length) {
    }

    /** A connection that records what is posted and completes nothing by itself; its own domain. */
    private static final class Fake implements WireConnection, WireDomain {
        final ByteBufAllocator alloc = UnpooledByteBufAllocator.DEFAULT;
        final EmbeddedChannel channel = new EmbeddedChannel();
        final ArrayDeque<Posted> recvs = new ArrayDeque<>();
        final ArrayDeque<Posted> sends = new ArrayDeque<>();
        final List<ByteBuf> owned = new ArrayList<>();
        WireCompletionListener listener;

        boolean allReleased() {
            return owned.stream().allMatch(b -> b.refCnt() == 0);
        }

        @Override
        public void postRecv(long wrId, WireRegion local, int offset, int length) {
            recvs.add(new Posted(wrId, local, offset, length));
        }

        @Override
        public void postSend(long wrId, WireRegion local, int offset, int length) {
            sends.add(new Posted(wrId, local, offset, length));
        }

        @Override
        public void postRdmaRead(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                 int remoteHandle) {
            throw new AssertionError("no RDMA Read expected");
        }

        @Override
        public void postRdmaWrite(long wrId, WireRegion local, int offset, int length, long remoteAddress,
                                  int remoteHandle) {
            throw new AssertionError("no RDMA Write expected");
        }

        @Override
        public Channel channel() {
            return channel;
        }

        @Override
        public void whenEstablished(Runnable action) {
        }

        @Override
        public String parameters() {
            return "fake";
        }

        @Override
        public String summary() {
            return "fake";
        }

        @Override
        public boolean crc() {
            return false;
        }

        @Override
        public int readDepth() {
            return 0;
        }

        @Override
        public byte[] peerData() {
            return new byte[0];
        }

        @Override
        public WireRegion register(ByteBuf memory, WireAccess... access) {
            owned.add(memory);
            return region(memory, false);
        }

        @Override
        public WireRegion registerOnDemand(int length, ByteBufAllocator a, WireAccess... access) {
            ByteBuf memory = a.directBuffer(length, length);
            owned.add(memory);
            return region(memory, true);
        }

        private static WireRegion region(ByteBuf memory, boolean ownsMemory) {
            return new WireRegion() {
                @Override
                public ByteBuf memory() {
                    return memory;
                }

                @Override
                public int length() {
                    return memory.capacity();
                }

                @Override
                public long remoteAddress(int offset) {
                    return offset;
                }

                @Override
                public int remoteHandle() {
                    return 1;
                }

                @Override
                public String describe() {
                    return "fake region";
                }

                @Override
                public void deregister() {
                    if (ownsMemory) {
                        memory.release();
                    }
                }
            };
        }
    }
}
