package dev.iwarp.server.perftest;

import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Connection A: perftest's control messages as lock-step Sends on QN 0, client first. Each side has exactly one
 * receive posted, reposted as soon as a message arrives and before the answer goes out, so a message never meets a
 * missing receive. Ours is {@value #RECEIVE_LENGTH} octets: enough for perftest 6.28's 320-octet negotiation message
 * and 6.29's 64-octet dests (older perftest posts 56). Every wait ends after the timeout.
 */
final class ControlChannel {
    static final int RECEIVE_LENGTH = 512;
    private static final long WR_RECV = 1;
    private static final long WR_SEND = 2;

    private final boolean client;
    private final long timeoutMs;
    private final Events events = new Events();
    private final ByteBuf sendMemory = Unpooled.directBuffer(RECEIVE_LENGTH, RECEIVE_LENGTH);
    private final ByteBuf recvMemory = Unpooled.directBuffer(RECEIVE_LENGTH, RECEIVE_LENGTH);
    private final WireRegion send;
    private final WireRegion recv;
    private WireConnection conn;
    private int exchanges;

    ControlChannel(WireDomain domain, boolean client, long timeoutMs) {
        this.client = client;
        this.timeoutMs = timeoutMs;
        sendMemory.writeZero(RECEIVE_LENGTH);
        recvMemory.writeZero(RECEIVE_LENGTH);
        send = domain.register(sendMemory);
        recv = domain.register(recvMemory, WireAccess.LOCAL_WRITE);
    }

    /** The listener to give the connection. */
    dev.iwarp.server.wire.WireCompletionListener listener() {
        return events.listener(0);
    }

    /** Binds the connection and posts the one receive (before the MPA exchange completes). */
    void attach(WireConnection c) {
        this.conn = c;
        c.postRecv(WR_RECV, recv, 0, RECEIVE_LENGTH);
    }

    WireConnection connection() {
        return conn;
    }

    /** How many messages went each way so far. */
    int exchanges() {
        return exchanges;
    }

    /**
     * One exchange: the client sends {@code mine} and then waits for the server's; the server waits, reposts its
     * receive and answers. Returns the peer's message (exactly as long as it was).
     */
    byte[] exchange(String what, byte[] mine) throws PerftestException {
        return exchangeWaiting(what, mine, timeoutMs);
    }

    /** As {@link #exchange}, waiting up to {@code waitMs} for the peer's message (a passive server during traffic). */
    byte[] exchangeWaiting(String what, byte[] mine, long waitMs) throws PerftestException {
        byte[] theirs;
        if (client) {
            sendAndWait(what, mine);
            theirs = receive(what, waitMs);
        } else {
            theirs = receive(what, waitMs);
            sendAndWait(what, mine);
        }
        exchanges++;
        return theirs;
    }

    /** Server: answers the peer's message with the same octets (perftest 6.28's parameter negotiation). */
    byte[] exchangeEcho(String what) throws PerftestException {
        byte[] theirs = receive(what, timeoutMs);
        sendAndWait(what, theirs);
        exchanges++;
        return theirs;
    }

    private void sendAndWait(String what, byte[] mine) throws PerftestException {
        sendMemory.setBytes(0, mine);
        conn.postSend(WR_SEND, send, 0, mine.length);
        Events.Event e = await(false, what + " (our Send)", timeoutMs);
        if (!e.success()) {
            throw failure("our " + what + " Send failed: " + e.status());
        }
    }

    private byte[] receive(String what, long waitMs) throws PerftestException {
        Events.Event e = await(true, "the peer's " + what, waitMs);
        if (!e.success()) {
            throw failure("the receive for the peer's " + what + " failed: " + e.status());
        }
        byte[] m = new byte[e.byteLength()];
        recvMemory.getBytes(0, m);
        conn.postRecv(WR_RECV, recv, 0, RECEIVE_LENGTH);
        return m;
    }

    private Events.Event await(boolean receive, String what, long waitMs) throws PerftestException {
        long deadline = System.nanoTime() + waitMs * 1_000_000L;
        while (true) {
            Events.Event e = events.poll(100);
            if (e != null) {
                if (e.receive() == receive || !e.success()) {
                    return e;
                }
                continue; // a completion of the other queue cannot be pending in lock-step; ignore
            }
            if (!conn.channel().isActive()) {
                throw failure("the peer closed the control connection while we waited for " + what);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new PerftestException("nothing came within " + waitMs + " ms while waiting for " + what
                        + " (control message " + (exchanges + 1) + "): is the peer perftest's server (or ours) "
                        + "running the same test with the same options?");
            }
        }
    }

    private PerftestException failure(String message) {
        String error = conn.peerError();
        return new PerftestException(message + (error != null ? "; the peer sent " + error : ""));
    }

    /** Frees the memory (after the connection is closed). */
    void release() {
        send.deregister();
        recv.deregister();
        sendMemory.release();
        recvMemory.release();
    }
}
