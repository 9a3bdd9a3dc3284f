package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.CompletionView;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Our stack: two {@link IwarpStack}s (one event loop each) over MPA on 127.0.0.1, driven from
 * reusing completion listeners (no object per completion). Work requests are built once and posted
 * again (they are immutable).
 * <ul>
 *   <li>WRITE/READ: {@code depth} RDMA Writes (or Reads, ORD = depth) outstanding; each completion
 *       posts the next.</li>
 *   <li>PINGPONG: one Send each way; the client times the round trip.</li>
 *   <li>PIPELINE: the client keeps up to {@code depth} Sends not yet credited; the server reposts
 *       each receive and Sends a credit every {@code depth / 2} messages.</li>
 * </ul>
 */
@SuppressWarnings("try") // close() waits for the event loops to stop, so it may be interrupted
final class OursRun extends CompareRun {
    private static final int RECV_SLOTS = 2;

    private IwarpStack serverStack;
    private IwarpStack clientStack;
    private Channel listener;
    private QueuePair qp;
    private volatile QueuePair serverQp;
    private ByteBuf serverMemory;
    private ByteBuf clientMemory;

    private SendRequest request;
    private SendRequest reply;
    private RecvRequest clientRecv;
    private RecvRequest[] serverRecvs;
    private long sentAt;
    private long sent;
    private long credited;
    /** Sends completed (PIPELINE): a Send's completion can come after the credit its arrival earned (io_uring). */
    private long sendsDone;
    private int sinceCredit;

    /** The raw writer's water marks instead of the stack's defaults ({@code compare --ours-water-marks raw}). */
    private final boolean rawWaterMarks;

    OursRun(CompareCase c) {
        this(c, false);
    }

    OursRun(CompareCase c, boolean rawWaterMarks) {
        super(c);
        this.rawWaterMarks = rawWaterMarks;
    }

    private IwarpStack stack() {
        IwarpStack.Builder b = IwarpStack.builder().transport(c.transport()).threads(1);
        return (rawWaterMarks ? b.writeBufferWaterMark(RawRun.waterMark(c)) : b).build();
    }

    @Override
    void open() throws Exception {
        // the stack's default write-buffer water marks, as a user gets them, unless asked for the raw writer's
        serverStack = stack();
        clientStack = stack();
        int slots = c.op() == CompareCase.Op.PIPELINE ? 2 * c.depth() : RECV_SLOTS;
        int memory = c.op() == CompareCase.Op.WRITE || c.op() == CompareCase.Op.READ ? c.size() : c.size() * slots;
        serverMemory = PooledByteBufAllocator.DEFAULT.directBuffer(memory, memory).writeZero(memory);
        clientMemory = PooledByteBufAllocator.DEFAULT.directBuffer(memory, memory).writeZero(memory);

        ProtectionDomain spd = serverStack.allocPd();
        MemoryRegion smr = spd.register(serverMemory, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        serverRecvs = new RecvRequest[slots];
        for (int i = 0; i < slots; i++) {
            serverRecvs[i] = RecvRequest.of(i, smr.slice(i * c.size() % memory, c.size()));
        }
        reply = SendRequest.send(0, smr.slice(0, c.size()));
        CompletionQueue sSend = new CompletionQueue();
        CompletionQueue sRecv = new CompletionQueue();
        sSend.setReusingListener(this::serverSendDone);
        sRecv.setReusingListener(this::serverReceived);
        MpaSettings mpa = MpaSettings.builder().crc(c.crc()).ird(c.depth()).ord(c.depth()).build();
        CompletableFuture<Channel> accepted = new CompletableFuture<>();
        TlsSettings serverTls = c.tls() ? Tls.SERVER : null;
        listener = serverStack.listen(new InetSocketAddress("127.0.0.1", 0), ListenOptions.mpa(mpa).tls(serverTls), req -> {
            QueuePair sqp = req.accept(spd, sSend, sRecv, new byte[0]);
            serverQp = sqp;
            if (c.op() == CompareCase.Op.PINGPONG || c.op() == CompareCase.Op.PIPELINE) {
                for (RecvRequest r : serverRecvs) {
                    sqp.postRecv(r);
                }
            }
            accepted.complete(req.channel());
        });

        ProtectionDomain cpd = clientStack.allocPd();
        MemoryRegion cmr = cpd.register(clientMemory, Access.LOCAL_WRITE);
        clientRecv = RecvRequest.of(0, cmr.slice(0, c.size()));
        request = switch (c.op()) {
            case WRITE -> SendRequest.rdmaWrite(0, cmr.all(), smr.stag(), smr.iova());
            case READ -> SendRequest.rdmaRead(0, cmr.all(), smr.stag(), smr.iova());
            default -> SendRequest.send(0, cmr.slice(0, c.size()));
        };
        CompletionQueue cSend = new CompletionQueue();
        CompletionQueue cRecv = new CompletionQueue();
        cSend.setReusingListener(this::clientSendDone);
        cRecv.setReusingListener(this::clientReceived);
        ConnectOptions opts = ConnectOptions.of(cpd).mpa(mpa).completionQueues(cSend, cRecv).beforeStartup(q -> {
            if (c.op() == CompareCase.Op.PINGPONG || c.op() == CompareCase.Op.PIPELINE) {
                for (int i = 0; i < RECV_SLOTS + 2; i++) {
                    q.postRecv(clientRecv);
                }
            }
        });
        qp = clientStack.connect(listener.localAddress(), c.tls() ? opts.tls(Tls.CLIENT) : opts)
                .get(10, TimeUnit.SECONDS);
        clientChannel = qp.channel();
        serverChannel = accepted.get(10, TimeUnit.SECONDS);
        clientLoop = clientChannel.eventLoop();
        serverLoop = serverChannel.eventLoop();
    }

    @Override
    void start() {
        clientLoop.execute(() -> {
            switch (c.op()) {
                case WRITE, READ -> {
                    for (int i = 0; i < c.depth(); i++) {
                        qp.postSend(request);
                    }
                }
                case PINGPONG -> {
                    sentAt = System.nanoTime();
                    qp.postSend(request);
                }
                case PIPELINE -> pump();
            }
        });
    }

    private void pump() {
        // the credit window, and never more Sends posted than the send queue holds (the verbs refuse them)
        while (!stopped && sent - credited < c.depth() && sent - sendsDone < qp.sendQueueDepth()) {
            sent++;
            qp.postSend(request);
        }
    }

    private void clientSendDone(CompletionView done) {
        if (!done.isSuccess()) {
            fail(done.toCompletion());
            return;
        }
        if (c.op() == CompareCase.Op.WRITE || c.op() == CompareCase.Op.READ) {
            messages++;
            if (!stopped) {
                qp.postSend(request);
            }
        } else if (c.op() == CompareCase.Op.PIPELINE) {
            sendsDone++;
            pump();
        }
    }

    private void clientReceived(CompletionView done) {
        if (!done.isSuccess()) {
            fail(done.toCompletion());
            return;
        }
        qp.postRecv(clientRecv);
        if (c.op() == CompareCase.Op.PINGPONG) {
            long now = System.nanoTime();
            rtt.recordValue(Math.min(now - sentAt, rtt.getHighestTrackableValue()));
            messages++;
            if (!stopped) {
                sentAt = System.nanoTime();
                qp.postSend(request);
            }
        } else {
            credited += c.creditEvery();
            pump();
        }
    }

    private void serverSendDone(CompletionView done) {
        if (!done.isSuccess()) {
            fail(done.toCompletion());
        }
    }

    private void serverReceived(CompletionView done) {
        if (!done.isSuccess()) {
            fail(done.toCompletion());
            return;
        }
        QueuePair sqp = serverQp;
        sqp.postRecv(serverRecvs[(int) done.wrId()]);
        if (c.op() == CompareCase.Op.PINGPONG) {
            sqp.postSend(reply);
        } else {
            messages++;
            if (++sinceCredit == c.creditEvery()) {
                sinceCredit = 0;
                sqp.postSend(reply);
            }
        }
    }

    @Override
    public void close() throws Exception {
        stopped = true;
        try {
            if (qp != null) {
                qp.close().await(5, TimeUnit.SECONDS);
            }
            if (listener != null) {
                listener.close().sync();
            }
        } finally {
            if (clientStack != null) {
                clientStack.close();
            }
            if (serverStack != null) {
                serverStack.close();
            }
            if (serverMemory != null) {
                serverMemory.release();
                clientMemory.release();
            }
        }
    }

    /**
     * One self-signed certificate per JVM for the TLS cases; the client pins it (no CA, no host name). The provider
     * is the raw baseline's.
     */
    private static final class Tls {
        static final TlsSettings SERVER;
        static final TlsSettings CLIENT;

        static {
            try {
                TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("compare", java.time.Duration.ofDays(1));
                SERVER = TlsSettings.builder().identity(self).provider(RawTls.PROVIDER).build();
                CLIENT = TlsSettings.builder().pin(TlsCertificates.fingerprint(self.certificate()))
                        .provider(RawTls.PROVIDER).build();
            } catch (java.security.GeneralSecurityException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }
}
