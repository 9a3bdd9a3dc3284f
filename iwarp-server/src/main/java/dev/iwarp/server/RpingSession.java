package dev.iwarp.server;

import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server side of one rping connection (siw-interop.md §7.3): one receive posted at all times;
 * 16-octet Sends are buffer advertisements, answered alternately by an RDMA Read of the advertised
 * buffer into the session buffer and an RDMA Write of the session buffer to it, each followed by a
 * 16-octet zero "go ahead" Send; a Send of any other length is echoed back.
 *
 * <p>Create it, pass {@link #sendCq()} and {@link #recvCq()} to the queue pair, then {@link #start}.
 * Everything after {@code start} runs on the connection's event loop (completion listeners).
 */
public final class RpingSession {
    private static final Logger LOG = LoggerFactory.getLogger(RpingSession.class);

    /** Session buffer size: rping's largest -S is 65535 (siw-interop.md §7.1). */
    public static final int BUFFER_SIZE = 64 * 1024;

    private static final long WR_RECV = 1;
    private static final long WR_READ = 2;
    private static final long WR_WRITE = 3;
    private static final long WR_GO_AHEAD = 4;
    private static final long WR_ECHO = 5;

    private final CompletionQueue sendCq = new CompletionQueue();
    private final CompletionQueue recvCq = new CompletionQueue();
    private final ByteBuf recvMemory;
    private final ByteBuf rdmaMemory;
    private final ByteBuf goAheadMemory;
    /** Receives advertisements and echo payloads; larger than 16 so any Send up to 64 KiB can be echoed. */
    private final MemoryRegion recv;
    /** rping's rdma_buf: RDMA Read sink and RDMA Write source (siw-interop.md §7.3). */
    private final MemoryRegion rdma;
    private final MemoryRegion goAhead;

    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong sends = new AtomicLong();
    private final AtomicLong echoes = new AtomicLong();
    private final AtomicLong bytesRead = new AtomicLong();
    private final AtomicLong bytesWritten = new AtomicLong();

    private volatile QueuePair qp;
    private SocketAddress peer;
    /** The next advertisement names the client's start_buf (Read) rather than its rdma_buf (Write). */
    private boolean nextIsRead = true;
    private boolean closed;
    private boolean released;

    public RpingSession(ProtectionDomain pd, ByteBufAllocator alloc) {
        recvMemory = zeroed(alloc);
        rdmaMemory = zeroed(alloc);
        goAheadMemory = alloc.directBuffer(Advertisement.LENGTH, Advertisement.LENGTH);
        goAheadMemory.setZero(0, Advertisement.LENGTH); // siw-interop.md §7.3: 16 zero octets
        recv = pd.register(recvMemory, Access.LOCAL_WRITE);
        rdma = pd.register(rdmaMemory, Access.LOCAL_WRITE);
        goAhead = pd.register(goAheadMemory);
        recvCq.setListener(this::onReceive);
        sendCq.setListener(this::onSendCompletion);
    }

    private static ByteBuf zeroed(ByteBufAllocator alloc) {
        ByteBuf b = alloc.directBuffer(BUFFER_SIZE, BUFFER_SIZE);
        b.setZero(0, BUFFER_SIZE);
        return b;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue recvCq() {
        return recvCq;
    }

    /**
     * Starts serving {@code qp} (created with this session's completion queues): posts the first
     * receive, and releases the buffers when the connection closes.
     */
    public void start(QueuePair qp) {
        this.qp = qp;
        this.peer = qp.channel().remoteAddress();
        qp.postRecv(RecvRequest.of(WR_RECV, recv.all()));
        qp.channel().closeFuture().addListener(f -> release());
        qp.established().addListener((Future<QueuePair> f) -> {
            if (f.isSuccess()) {
                MpaParameters p = qp.mpaParameters();
                LOG.info("{} connected: MPA Rev {}, CRC {}, markers {}, IRD {} ORD {}{}", peer, p.revision(),
                        p.crc() ? "on" : "off", p.markersTx() || p.markersRx() ? "on" : "off", p.ird(), p.ord(),
                        p.peerToPeer() ? ", peer-to-peer RTR " + p.rtrType() : "");
            }
        });
    }

    private void onReceive(Completion c) {
        if (!c.isSuccess()) {
            fail(c);
            return;
        }
        int len = c.byteLength();
        if (len != Advertisement.LENGTH) {
            // not an rping advertisement: echo it, re-post once the echo is on the wire (one receive buffer)
            qp.postSend(SendRequest.send(WR_ECHO, recv.slice(0, len)));
            return;
        }
        Advertisement ad = Advertisement.decode(recv.memory(), 0);
        qp.postRecv(RecvRequest.of(WR_RECV, recv.all())); // siw-interop.md §7.1: re-post after each receive
        if (ad.sizeUnsigned() > BUFFER_SIZE) {
            LOG.warn("{} advertised {} octets, more than the {}-octet session buffer; closing", peer,
                    ad.sizeUnsigned(), BUFFER_SIZE);
            close();
            return;
        }
        if (nextIsRead) {
            qp.postSend(SendRequest.rdmaRead(WR_READ, rdma.slice(0, ad.size()), ad.stag(), ad.to()));
        } else {
            qp.postSend(SendRequest.rdmaWrite(WR_WRITE, rdma.slice(0, ad.size()), ad.stag(), ad.to()));
        }
        nextIsRead = !nextIsRead;
    }

    private void onSendCompletion(Completion c) {
        if (!c.isSuccess()) {
            fail(c);
            return;
        }
        long wr = c.wrId();
        if (wr == WR_READ) {
            reads.incrementAndGet();
            bytesRead.addAndGet(c.byteLength());
            goAhead();
        } else if (wr == WR_WRITE) {
            writes.incrementAndGet();
            bytesWritten.addAndGet(c.byteLength());
            goAhead(); // siw-interop.md §7.3: posted after the Write's local completion
        } else if (wr == WR_ECHO) {
            echoes.incrementAndGet();
            sends.incrementAndGet();
            qp.postRecv(RecvRequest.of(WR_RECV, recv.all()));
        } else {
            sends.incrementAndGet();
        }
    }

    private void goAhead() {
        qp.postSend(SendRequest.send(WR_GO_AHEAD, goAhead.all()));
    }

    private void fail(Completion c) {
        if (!closed) {
            LOG.debug("{} {}; closing", peer, c);
            close();
        }
    }

    /**
     * Closes the TCP connection (FIN, like siw's socket release, siw-interop.md §5). Not
     * {@code QueuePair.close()}: that first sends an empty FPDU (see README, known problems).
     */
    public void close() {
        closed = true;
        QueuePair q = qp;
        if (q != null) { // null while the MPA Reply is still being sent: the stack's shutdown closes it
            q.channel().close();
        }
    }

    private synchronized void release() {
        if (!released) {
            released = true;
            recv.deregister();
            rdma.deregister();
            goAhead.deregister();
            recvMemory.release();
            rdmaMemory.release();
            goAheadMemory.release();
        }
    }

    public QueuePair queuePair() {
        return qp;
    }

    /** Completed RDMA Reads. */
    public long reads() {
        return reads.get();
    }

    /** Completed RDMA Writes. */
    public long writes() {
        return writes.get();
    }

    /** Completed Sends: "go ahead"s and echoes. */
    public long sends() {
        return sends.get();
    }

    /** Completed echo Sends. */
    public long echoes() {
        return echoes.get();
    }

    public long bytesRead() {
        return bytesRead.get();
    }

    public long bytesWritten() {
        return bytesWritten.get();
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

    /** A copy of the first {@code length} octets of the session buffer (rping's rdma_buf). */
    public byte[] buffer(int length) {
        byte[] b = new byte[length];
        rdma.memory().getBytes(0, b);
        return b;
    }

    @Override
    public String toString() {
        return "rping session " + peer + ": " + reads + " Reads (" + bytesRead + " octets), " + writes + " Writes ("
                + bytesWritten + " octets), " + sends + " Sends (" + echoes + " echoes)";
    }
}
