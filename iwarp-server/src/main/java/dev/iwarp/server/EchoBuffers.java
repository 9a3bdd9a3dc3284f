package dev.iwarp.server;

import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBufAllocator;

/**
 * The receive buffer of an {@link RpingSession} (the one receive rping's exchange keeps posted) and, from the first
 * plain echo on, a second one, so that the receive stays posted while an echo is on its way: the client sends its
 * next Send as soon as it holds the echo, and a transport may report the echo's completion after that Send arrived
 * (io_uring does), while the echo's source must stay as it is until that completion (verbs: a Send's buffer is the
 * consumer's again only then). A Send finding no receive would get DDP's Terminate (invalid MSN, no buffer
 * available, RFC 5041 §7.2). Both are registered on demand: over iWARP memory only while a Send is placed in them,
 * drawn from the connection's memory account (serve's budget, which counts the second in {@link
 * ServerMemory#perConnection}); over VI/TCP, which has neither on-demand memory nor an account, each holds its 64 KiB
 * from its registration (the second from the first echo) until {@link #release}, outside the budget as every VI/TCP
 * session buffer is.
 *
 * <p>Runs on the connection's event loop, as the session's completions do; {@link #release} and
 * {@link #isAllocated} from any thread.
 */
final class EchoBuffers {
    private final WireDomain domain;
    private final ByteBufAllocator alloc;
    /** The region the session's receive is posted into (or the Send just placed there is read from). */
    private WireRegion posted;
    /** The echo's source while it is on its way, else free; null until the first echo. */
    private WireRegion other;
    /** Whether {@link #other} holds an echo whose completion was not reported yet. */
    private boolean otherBusy;
    /** Octets of the Send in {@link #posted} whose echo waits for {@link #other} to be free, or -1. */
    private int held = -1;
    private boolean released;

    EchoBuffers(WireDomain domain, ByteBufAllocator alloc) {
        this.domain = domain;
        this.alloc = alloc;
        posted = domain.registerOnDemand(RpingSession.BUFFER_SIZE, alloc, WireAccess.LOCAL_WRITE);
    }

    /** The region the session's receive goes into, and its last Send was placed into. */
    WireRegion posted() {
        return posted;
    }

    /**
     * Echoes the {@code length} octets placed into {@link #posted}: posts the receive {@code wrRecv} into the other
     * buffer first, then the Send {@code wrEcho} from this one; with the other one still on its way, the echo waits
     * for {@link #echoed}.
     */
    void echo(WireConnection conn, long wrRecv, long wrEcho, int length) {
        if (otherBusy) {
            held = length;
            return;
        }
        WireRegion full = swap();
        if (full == null) { // released: the connection is closing
            return;
        }
        otherBusy = true;
        conn.postRecv(wrRecv, posted, 0, RpingSession.BUFFER_SIZE);
        conn.postSend(wrEcho, full, 0, length);
    }

    /** The echo completed: its buffer gives its memory back and is free (a held echo leaves now). */
    void echoed(WireConnection conn, long wrRecv, long wrEcho) {
        other.discard();
        otherBusy = false;
        if (held >= 0) {
            int length = held;
            held = -1;
            echo(conn, wrRecv, wrEcho, length);
        }
    }

    /** Makes the other buffer (registered at the first echo) the posted one; returns the former; null once released. */
    private synchronized WireRegion swap() {
        if (released) {
            return null;
        }
        if (other == null) {
            other = domain.registerOnDemand(RpingSession.BUFFER_SIZE, alloc, WireAccess.LOCAL_WRITE);
        }
        WireRegion full = posted;
        posted = other;
        other = full;
        return full;
    }

    synchronized boolean isAllocated() {
        return posted.isAllocated() || other != null && other.isAllocated();
    }

    /** Deregisters both (and their memory, if they hold any). */
    synchronized void release() {
        if (!released) {
            released = true;
            posted.deregister();
            if (other != null) {
                other.deregister();
            }
        }
    }
}
