package dev.iwarp.server;

import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireCompletionListener;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import dev.iwarp.verbs.SendQueueFullException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.SocketAddress;

/**
 * The server side of one rping connection (rdma-core's rping.c), on either wire: one receive posted at all times;
 * 16-octet Sends are buffer advertisements, answered alternately by an RDMA Read of the advertised buffer into the
 * session buffer and an RDMA Write of the session buffer to it, each followed by a 16-octet zero "go ahead" Send;
 * a Send of any other length is echoed back. A {@link BenchHello} request from {@code bench --op send} gets up to
 * {@link BenchHello#MAX_DEPTH} receives posted for pipelined echoes ({@link EchoRing}) and the answer how many. Written once against
 * {@link WireConnection}: over iWARP the advertisement names (TO, STag), over VI/TCP (virtual address, memory
 * handle).
 *
 * <p>One advertisement in flight, as rping's client keeps it: the receive is re-posted with the go-ahead, so an
 * advertisement sent before the go-ahead finds none and the peer gets DDP's Terminate (invalid MSN, no buffer).
 *
 * <p>Memory: the receive buffer is registered on demand and the RDMA buffer at the first advertisement, so a session
 * that never received an advertisement holds the memory of neither, and no registration of the RDMA buffer. The
 * receive buffer gets memory when a Send is placed; after an echo it gives it back, after an advertisement it keeps
 * it for the next one, and the RDMA buffer keeps its memory from the first RDMA Read, both until the connection
 * closes: a 16-octet advertisement costs no 64 KiB allocated and zeroed. Over VI/TCP (no on-demand memory) the
 * receive buffer is held from the start, the RDMA buffer from the first advertisement.
 *
 * <p>Create it, accept the connection with it as the {@link WireCompletionListener}, then {@link #start}.
 * Everything after {@code start} runs on the connection's event loop (completion callbacks).
 */
public final class RpingSession implements WireCompletionListener {
    private static final Logger LOG = LoggerFactory.getLogger(RpingSession.class);

    /** Session buffer size: rping's largest -S is 65535 (rdma-core's rping.c). */
    public static final int BUFFER_SIZE = 64 * 1024;

    private static final long WR_RECV = 1;
    private static final long WR_READ = 2;
    private static final long WR_WRITE = 3;
    private static final long WR_GO_AHEAD = 4;
    private static final long WR_ECHO = 5;
    private static final long WR_BENCH_ANSWER = 6;
    private static final long WR_COST_ANSWER = 7;

    /**
     * Receives advertisements and echo payloads; larger than 16 so any Send up to 64 KiB can be echoed. A second
     * buffer from the first plain echo on: the receive is posted into it before the echo leaves.
     */
    private final EchoBuffers recv;
    /**
     * rping's rdma_buf: RDMA Read sink and RDMA Write source (rdma-core's rping.c); registered at the first
     * advertisement (an idle connection holds no registration for it), null until then and once released.
     */
    private WireRegion rdma;
    /** The go-ahead and bench's answers: made at the first of each (an idle connection holds none). */
    private final SessionReplies replies;
    private final WireDomain domain;
    private final ByteBufAllocator alloc;
    /** After a bench hello that granted receives: the pipelined echoes' receives (null until then). */
    private EchoRing ring;
    /** The connection's own target region, when {@link RpingServer} made one (it deregisters it at close). */
    volatile WireRegion target;

    // Written only on the connection's event loop (one writer), read from any thread: volatile longs, not six
    // AtomicLong objects held by every idle connection.
    private volatile long reads;
    private volatile long writes;
    private volatile long sends;
    private volatile long echoes;
    private volatile long bytesRead;
    private volatile long bytesWritten;

    private volatile WireConnection conn;
    private SocketAddress peer;
    /** The next advertisement names the client's start_buf (Read) rather than its rdma_buf (Write). */
    private boolean nextIsRead = true;
    private boolean closed;
    private boolean released;

    /** Echo every Send (serve --echo) rather than reading 16-octet ones as advertisements. */
    private final boolean echoOnly;

    public RpingSession(WireDomain domain, ByteBufAllocator alloc) {
        this(domain, alloc, false);
    }

    public RpingSession(WireDomain domain, ByteBufAllocator alloc, boolean echoOnly) {
        this.echoOnly = echoOnly;
        this.domain = domain;
        this.alloc = alloc;
        recv = new EchoBuffers(domain, alloc);
        replies = new SessionReplies(domain, alloc);
    }

    /**
     * Starts serving {@code conn} (accepted with this session as its listener): posts the first receive, and
     * releases the buffers when the connection closes.
     */
    public void start(WireConnection conn) {
        this.conn = conn;
        this.peer = dev.iwarp.server.wire.Addresses.printable(conn.channel().remoteAddress()); // 127.0.0.1:7174
        conn.postRecv(WR_RECV, recv.posted(), 0, BUFFER_SIZE);
        conn.channel().closeFuture().addListener(f -> release());
        conn.whenEstablished(() -> LOG.info("{} connected: {}", peer, conn.parameters()));
    }

    @Override
    public void completed(long wrId, boolean receive, boolean success, int byteLength, Enum<?> status) {
        try {
            handle(wrId, receive, success, byteLength, status);
        } catch (SendQueueFullException e) { // cannot happen with one advertisement in flight; never a dead session
            LOG.warn("{} {}; closing", peer, e.getMessage());
            close();
        }
    }

    private void handle(long wrId, boolean receive, boolean success, int byteLength, Enum<?> status) {
        if (!success) {
            fail(wrId, status);
        } else if (receive && wrId >= EchoRing.WR_RECV) {
            ring.received(wrId, byteLength);
        } else if (receive) {
            onReceive(byteLength);
        } else {
            onSendCompletion(wrId, byteLength);
        }
    }

    private void onReceive(int len) {
        ByteBuf m = recv.posted().memory(); // where the Send was placed
        if (!echoOnly && !replies.helloAnswered() && BenchHello.isRequest(m, 0, len)) { // one hello per connection
            grantRing();
            recv.posted().discard(); // read; re-posted (and placed into) only if no receive was granted
            return;
        }
        if (!echoOnly && BenchCost.isRequest(m, 0, len)) {
            answerCost();
            return;
        }
        if (echoOnly || len != Advertisement.LENGTH || m.getLong(0) == 0 && m.getLong(8) == 0) {
            // not an rping advertisement: echo it, the receive posted into the other buffer first (EchoBuffers). 16
            // zero octets (TO 0, STag 0, 0 octets) advertise nothing: librdmacm's rdma_client and sendrecv send them
            recv.echo(conn, WR_RECV, WR_ECHO, len);
            return;
        }
        long address = m.getLong(0); // rdma-core's rping.c; VI: virtual address, memory handle
        int handle = m.getInt(8);
        long size = m.getUnsignedInt(12);
        // the advertisement is read. Its memory stays for the next one (no 64 KiB allocated and zeroed per 16-octet
        // message); the receive is re-posted with the go-ahead: one advertisement in flight, as rping's client waits
        // for the go-ahead. One sent before it finds no receive: DDP's Terminate, invalid MSN / no buffer (RFC 5041
        // §7.2), rather than an RDMA Read or Write queued for each (a peer that granted ORD 0 could stream them).
        m.setZero(0, Advertisement.LENGTH);
        if (size > BUFFER_SIZE) {
            LOG.warn("{} advertised {} octets, more than the {}-octet session buffer; closing", peer, size,
                    BUFFER_SIZE);
            close();
            return;
        }
        WireRegion r = rdmaRegion();
        if (r == null) { // released: the connection is closing
            return;
        }
        if (nextIsRead) {
            conn.postRdmaRead(WR_READ, r, 0, (int) size, address, handle);
        } else {
            conn.postRdmaWrite(WR_WRITE, r, 0, (int) size, address, handle);
        }
        nextIsRead = !nextIsRead;
    }

    /**
     * bench --op send asked for receives to pipeline its Sends: post up to the granted number, each in its own
     * slot, answer with that number; from now on every Send is echoed from its slot (BenchHello).
     */
    private void grantRing() {
        if (closed) {
            return;
        }
        ByteBuf m = recv.posted().memory();
        int size = BenchHello.size(m, 0);
        int granted = BenchHello.grant(size, BenchHello.depth(m, 0));
        if (granted > 0 && !domain.memoryAccount().tryReserve(2L * granted * size)) {
            LOG.debug("{} bench hello: no memory budget for {} receives of {} octets; granting none", peer, granted,
                    size);
            granted = 0; // the client pipelines nothing: one Send at a time into the session's receive buffer
        }
        WireRegion answer = replies.helloAnswer(size, granted);
        if (answer == null) { // released: the connection is closing
            domain.memoryAccount().release(2L * granted * size);
            return;
        }
        if (granted == 0) {
            conn.postRecv(WR_RECV, recv.posted(), 0, BUFFER_SIZE);
        } else {
            ring = new EchoRing(domain, alloc, conn, size, granted);
        }
        LOG.debug("{} bench hello: {} receives of {} octets posted", peer, granted, size);
        conn.postSend(WR_BENCH_ANSWER, answer, 0, BenchHello.LENGTH); // after the receives: they are in effect
    }

    /** bench asked what this process spent so far (BenchCost): answer, then re-post the receive once it left. */
    private void answerCost() {
        if (closed) {
            return;
        }
        WireRegion cost = replies.costAnswer();
        if (cost == null) { // released: the connection is closing
            return;
        }
        recv.posted().discard();
        conn.postSend(WR_COST_ANSWER, cost, 0, BenchCost.ANSWER_LENGTH);
    }

    private void onSendCompletion(long wr, int byteLength) {
        if (wr >= EchoRing.WR_ECHO) {
            echoes++;
            sends++;
            ring.echoed(wr);
        } else if (wr == WR_READ) {
            reads++;
            bytesRead += byteLength;
            goAhead();
        } else if (wr == WR_WRITE) {
            // the Read's data went back; the buffer keeps its memory for the next Read (no 64 KiB allocated and
            // zeroed per advertisement) until the connection closes
            writes++;
            bytesWritten += byteLength;
            goAhead(); // rdma-core's rping.c: posted after the Write's local completion
        } else if (wr == WR_COST_ANSWER) {
            conn.postRecv(WR_RECV, recv.posted(), 0, BUFFER_SIZE);
        } else if (wr == WR_ECHO) {
            recv.echoed(conn, WR_RECV, WR_ECHO); // the echo is on the wire: its buffer gives its memory back
            echoes++;
            sends++;
        } else {
            sends++;
        }
    }

    private void goAhead() {
        WireRegion g = replies.goAhead();
        if (g == null) { // released: the connection is closing
            return;
        }
        conn.postRecv(WR_RECV, recv.posted(), 0, BUFFER_SIZE); // before the go-ahead: the next advertisement finds it
        conn.postSend(WR_GO_AHEAD, g, 0, Advertisement.LENGTH);
    }

    /** The RDMA buffer's region, registered at the first advertisement; null once released. */
    private synchronized WireRegion rdmaRegion() {
        if (rdma == null && !released) {
            rdma = domain.registerOnDemand(BUFFER_SIZE, alloc, WireAccess.LOCAL_WRITE);
        }
        return rdma;
    }

    private void fail(long wrId, Enum<?> status) {
        if (!closed) {
            boolean receive = wrId == WR_RECV || EchoRing.isReceive(wrId);
            String what = receive ? "receive" : wrId == WR_READ ? "RDMA Read" : wrId == WR_WRITE ? "RDMA Write" : "Send";
            if (status.name().contains("FLUSH")) { // WR_FLUSH_ERR, FLUSHED: the connection is already going
                LOG.debug("{} {} flushed; closing", peer, what);
            } else {
                LOG.info("{} {} completed with {}; closing", peer, what, status);
            }
            close();
        }
    }

    /** Closes the TCP connection (FIN, like siw's socket release, siw_qp.c). */
    public void close() {
        closed = true;
        WireConnection c = conn;
        if (c != null) { // null while the accept is still being sent: the server's shutdown closes it
            c.channel().close();
        }
    }

    private synchronized void release() {
        if (!released) {
            released = true;
            recv.release(); // and their memory, if they hold any
            if (rdma != null) {
                rdma.deregister();
            }
            if (ring != null) {
                int ringOctets = ring.octets();
                ring.release();
                domain.memoryAccount().release(ringOctets);
            }
            replies.release();
        }
    }

    public WireConnection connection() {
        return conn;
    }

    /** Completed RDMA Reads. */
    public long reads() {
        return reads;
    }

    /** Completed RDMA Writes. */
    public long writes() {
        return writes;
    }

    /** Completed Sends: "go ahead"s and echoes. */
    public long sends() {
        return sends;
    }

    /** Completed echo Sends. */
    public long echoes() {
        return echoes;
    }

    public long bytesRead() {
        return bytesRead;
    }

    public long bytesWritten() {
        return bytesWritten;
    }

    /** Waits up to {@code timeoutMs} until at least these many Reads, Writes and Sends completed. */
    public boolean awaitCounts(long minReads, long minWrites, long minSends, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        while (reads() < minReads || writes() < minWrites || sends() < minSends) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    /**
     * Whether the receive or the RDMA buffer holds memory now: over iWARP none before the first Send, and both once
     * advertisements were served (kept for the next one until the connection closes).
     */
    public synchronized boolean holdsBuffers() {
        return recv.isAllocated() || rdma != null && rdma.isAllocated();
    }

    /** Whether the RDMA buffer is registered: from the first advertisement on (an idle session has none). */
    public synchronized boolean rdmaBufferRegistered() {
        return rdma != null;
    }

    /** A copy of the first {@code length} octets of the session buffer (rping's rdma_buf). */
    public byte[] buffer(int length) {
        byte[] b = new byte[length];
        WireRegion r = rdmaRegion();
        if (r != null) {
            r.memory().getBytes(0, b);
        }
        return b;
    }

    @Override
    public String toString() {
        // ours first (what the server did), then what the peer did to us (bench's Writes land only there)
        WireConnection c = conn;
        String theirs = c == null ? null : c.peerActivity();
        return "rping session " + peer + ": " + reads + " Reads (" + bytesRead + " octets), " + writes + " Writes ("
                + bytesWritten + " octets), " + sends + " Sends (" + echoes + " echoes)"
                + (theirs == null ? "" : "; the peer: " + theirs);
    }
}
