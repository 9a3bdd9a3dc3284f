package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An rping client (siw-interop.md §7.3) over the verbs API: per ping, Send the advertisement of
 * start_buf (the server RDMA Reads it), wait for the 16-octet "go ahead", Send the advertisement of
 * rdma_buf (the server RDMA Writes it), wait for the "go ahead", and optionally compare the two.
 * Talks to {@code serve} and to stock {@code rping -s}. Not thread-safe.
 */
public final class RpingClient implements AutoCloseable {
    /** rping's limits on -S (siw-interop.md §7.1). */
    public static final int MIN_SIZE = 26;
    public static final int MAX_SIZE = 65535;

    private static final long WR_RECV = 1;
    private static final long WR_ADVERT = 2;

    private final int size;
    private final long timeoutMs;
    private final CompletionQueue sendCq = new CompletionQueue();
    private final CompletionQueue recvCq = new CompletionQueue();
    private final ByteBuf startMemory;
    private final ByteBuf rdmaMemory;
    private final ByteBuf advertMemory;
    private final ByteBuf recvMemory;
    private final MemoryRegion startBuf;
    private final MemoryRegion rdmaBuf;
    private final MemoryRegion advert;
    private final MemoryRegion recv;
    private QueuePair qp;
    /** First printable character of the next ping's pattern ('A'..'z', rping's "start"). */
    private int start = 'A';

    private RpingClient(ProtectionDomain pd, int size, long timeoutMs) {
        if (size < MIN_SIZE || size > MAX_SIZE) {
            throw new IllegalArgumentException("ping size must be " + MIN_SIZE + ".." + MAX_SIZE + ": " + size);
        }
        this.size = size;
        this.timeoutMs = timeoutMs;
        startMemory = buffer(size);
        rdmaMemory = buffer(size);
        advertMemory = buffer(Advertisement.LENGTH);
        recvMemory = buffer(Advertisement.LENGTH);
        startBuf = pd.register(startMemory, Access.REMOTE_READ);
        rdmaBuf = pd.register(rdmaMemory, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        advert = pd.register(advertMemory);
        recv = pd.register(recvMemory, Access.LOCAL_WRITE);
    }

    private static ByteBuf buffer(int n) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(n, n);
        b.setZero(0, n);
        return b;
    }

    /**
     * Connects as MPA Initiator (Rev 2, IRD 1 ORD 1 like rping unless {@code mpa} says otherwise),
     * with the one 16-octet receive posted before the Request (siw-interop.md §7.1).
     */
    public static RpingClient connect(IwarpStack stack, SocketAddress server, MpaSettings mpa, int size, long timeoutMs)
            throws IOException {
        RpingClient c = new RpingClient(stack.allocPd(), size, timeoutMs);
        ConnectOptions opts = ConnectOptions.of(c.startBuf.pd()).mpa(mpa).completionQueues(c.sendCq, c.recvCq)
                .beforeStartup(qp -> qp.postRecv(RecvRequest.of(WR_RECV, c.recv.all())));
        try {
            c.qp = stack.connect(server, opts).get(timeoutMs, TimeUnit.MILLISECONDS);
            return c;
        } catch (ExecutionException e) {
            c.close();
            throw new IOException("cannot connect to " + server + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException | InterruptedException e) {
            c.close();
            throw new IOException("cannot connect to " + server + ": no MPA Reply within " + timeoutMs + " ms", e);
        }
    }

    /** rping's MPA settings: Rev 2, IRD 1, ORD 1, no CRC (siw-interop.md §7.1, §1). */
    public static MpaSettings rpingSettings(boolean crc) {
        return MpaSettings.builder().revision(2).crc(crc).ird(1).ord(1).build();
    }

    public MpaParameters mpaParameters() {
        return qp.mpaParameters();
    }

    public QueuePair queuePair() {
        return qp;
    }

    /**
     * The ping data rping puts in start_buf for ping {@code n} starting at character {@code first}:
     * "rdma-ping-n: " then 'first', 'first'+1, ... cycling 'A'..'z', last octet 0 (siw-interop.md §7.3).
     */
    public static byte[] pingData(int n, int first, int size) {
        byte[] b = new byte[size];
        byte[] prefix = ("rdma-ping-" + n + ": ").getBytes(StandardCharsets.US_ASCII);
        int cc = Math.min(prefix.length, size - 1); // snprintf(start_buf, size, ...)
        System.arraycopy(prefix, 0, b, 0, cc);
        int c = first;
        for (int i = cc; i < size; i++) {
            b[i] = (byte) c;
            if (++c > 'z') {
                c = 'A';
            }
        }
        b[size - 1] = 0;
        return b;
    }

    /**
     * Runs ping {@code n}: fills start_buf, lets the server Read it and Write it back into rdma_buf.
     *
     * @return what rdma_buf holds afterwards ({@code size} octets)
     * @throws IOException when a work request fails or the server does not answer in time
     */
    public byte[] ping(int n) throws IOException {
        byte[] data = pingData(n, start, size);
        if (++start > 'z') {
            start = 'A';
        }
        startMemory.setBytes(0, data);
        rdmaMemory.setZero(0, size);
        exchange(Advertisement.of(startBuf.all()), "start_buf");
        exchange(Advertisement.of(rdmaBuf.all()), "rdma_buf");
        byte[] got = new byte[size];
        rdmaMemory.getBytes(0, got);
        return got;
    }

    /** Sends one advertisement and waits for its Send completion and the server's 16-octet "go ahead". */
    private void exchange(Advertisement ad, String what) throws IOException {
        ad.encode(advertMemory, 0);
        qp.postSend(SendRequest.send(WR_ADVERT, advert.all()));
        expect(sendCq, "Send of the " + what + " advertisement");
        Completion c = expect(recvCq, "the server's Send after the " + what + " advertisement");
        if (c.byteLength() != Advertisement.LENGTH) {
            // rping rejects any Send whose length is not 16 (siw-interop.md §7.1)
            throw new IOException("server sent " + c.byteLength() + " octets; rping expects 16");
        }
        qp.postRecv(RecvRequest.of(WR_RECV, recv.all()));
    }

    private Completion expect(CompletionQueue cq, String what) throws IOException {
        Completion c;
        try {
            c = cq.take(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for " + what, e);
        }
        if (c == null) {
            throw new IOException("no completion for " + what + " within " + timeoutMs + " ms");
        }
        if (!c.isSuccess()) {
            throw new IOException(what + " failed: " + c.status() + (c.detail() != null ? " (" + c.detail() + ")" : ""));
        }
        return c;
    }

    /** A copy of start_buf's current contents. */
    public byte[] startBuffer() {
        byte[] b = new byte[size];
        startMemory.getBytes(0, b);
        return b;
    }

    /** Disconnects (TCP FIN, like rdma_disconnect) and releases the buffers. */
    @Override
    public void close() {
        if (qp != null) {
            // a plain TCP close like rdma_disconnect; QueuePair.close() would first send an empty FPDU
            // (RdmaEngine.closeGracefully writes EMPTY_BUFFER through the MPA framer)
            qp.channel().close().awaitUninterruptibly(timeoutMs, TimeUnit.MILLISECONDS);
        }
        for (MemoryRegion mr : new MemoryRegion[] {startBuf, rdmaBuf, advert, recv}) {
            mr.deregister();
        }
        startMemory.release();
        rdmaMemory.release();
        advertMemory.release();
        recvMemory.release();
    }
}
