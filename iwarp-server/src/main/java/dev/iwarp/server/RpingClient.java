package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.server.wire.BlockingCompletions;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * An rping client (rdma-core's rping.c) on either wire: per ping, Send the advertisement of start_buf (the server
 * RDMA Reads it), wait for the 16-octet "go ahead", Send the advertisement of rdma_buf (the server RDMA Writes
 * it), wait for the "go ahead", and optionally compare the two. Over iWARP it talks to {@code serve} and to stock
 * {@code rping -s}; over VI/TCP to {@code serve --wire vitcp}. Not thread-safe.
 */
public final class RpingClient implements AutoCloseable {
    /** rping's limits on -S (rdma-core's rping.c). */
    public static final int MIN_SIZE = 26;
    public static final int MAX_SIZE = 65535;

    private static final long WR_RECV = 1;
    private static final long WR_ADVERT = 2;

    private final WireDomain domain;
    private final int size;
    private final long timeoutMs;
    private final BlockingCompletions completions = new BlockingCompletions();
    private final ByteBuf startMemory;
    private final ByteBuf rdmaMemory;
    private final ByteBuf advertMemory;
    private final ByteBuf recvMemory;
    private final WireRegion startBuf;
    private final WireRegion rdmaBuf;
    private final WireRegion advert;
    private final WireRegion recv;
    private WireConnection conn;
    /** First printable character of the next ping's pattern ('A'..'z', rping's "start"). */
    private int start = 'A';

    private RpingClient(WireDomain domain, int size, long timeoutMs) {
        if (size < MIN_SIZE || size > MAX_SIZE) {
            throw new IllegalArgumentException("ping size must be " + MIN_SIZE + ".." + MAX_SIZE + ": " + size);
        }
        this.domain = domain;
        this.size = size;
        this.timeoutMs = timeoutMs;
        startMemory = buffer(size);
        rdmaMemory = buffer(size);
        advertMemory = buffer(Advertisement.LENGTH);
        recvMemory = buffer(Advertisement.LENGTH);
        startBuf = domain.register(startMemory, WireAccess.REMOTE_READ);
        rdmaBuf = domain.register(rdmaMemory, WireAccess.LOCAL_WRITE, WireAccess.REMOTE_WRITE);
        advert = domain.register(advertMemory);
        recv = domain.register(recvMemory, WireAccess.LOCAL_WRITE);
    }

    private static ByteBuf buffer(int n) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(n, n);
        b.setZero(0, n);
        return b;
    }

    /**
     * Connects over {@code wire} (IRD/ORD or RDMA Read Window 1 like rping), with the one 16-octet receive posted
     * before the connection request (rdma-core's rping.c).
     */
    public static RpingClient connect(ClientWire wire, InetSocketAddress server, boolean crc, int size,
                                      long timeoutMs) throws IOException {
        RpingClient c = new RpingClient(wire.allocDomain(), size, timeoutMs);
        try {
            c.conn = wire.connect(server, c.domain, crc, 1, c.completions,
                    conn -> conn.postRecv(WR_RECV, c.recv, 0, Advertisement.LENGTH), timeoutMs);
            return c;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** iWARP with exactly these MPA settings (e.g. {@link #rpingSettings}). */
    public static RpingClient connect(IwarpStack stack, SocketAddress server, MpaSettings mpa, int size,
                                      long timeoutMs) throws IOException {
        return connect(IwarpWire.client(stack, mpa), (InetSocketAddress) server, mpa.crc(), size, timeoutMs);
    }

    /** rping's MPA settings: Rev 2, IRD 1, ORD 1, no CRC (rdma-core's rping.c, siw's siw.h constants). */
    public static MpaSettings rpingSettings(boolean crc) {
        return MpaSettings.builder().revision(2).crc(crc).ird(1).ord(1).build();
    }

    public WireConnection connection() {
        return conn;
    }

    /**
     * The ping data rping puts in start_buf for ping {@code n} starting at character {@code first}:
     * "rdma-ping-n: " then 'first', 'first'+1, ... cycling 'A'..'z', last octet 0 (rdma-core's rping.c).
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
        exchange(Advertisement.of(startBuf, 0, size), "start_buf");
        exchange(Advertisement.of(rdmaBuf, 0, size), "rdma_buf");
        byte[] got = new byte[size];
        rdmaMemory.getBytes(0, got);
        return got;
    }

    /** Sends one advertisement and waits for its Send completion and the server's 16-octet "go ahead". */
    private void exchange(Advertisement ad, String what) throws IOException {
        ad.encode(advertMemory, 0);
        conn.postSend(WR_ADVERT, advert, 0, Advertisement.LENGTH);
        completions.take(false, timeoutMs, "Send of the " + what + " advertisement");
        BlockingCompletions.Done c = completions.take(true, timeoutMs,
                "the server's Send after the " + what + " advertisement");
        if (c.byteLength() != Advertisement.LENGTH) {
            // rping rejects any Send whose length is not 16 (rdma-core's rping.c)
            throw new IOException("server sent " + c.byteLength() + " octets; rping expects 16");
        }
        conn.postRecv(WR_RECV, recv, 0, Advertisement.LENGTH);
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
        if (conn != null) {
            // a plain TCP close like rdma_disconnect; QueuePair.close() would first send an empty FPDU
            // (RdmaEngine.closeGracefully writes EMPTY_BUFFER through the MPA framer)
            conn.channel().close().awaitUninterruptibly(timeoutMs, TimeUnit.MILLISECONDS);
        }
        for (WireRegion r : new WireRegion[] {startBuf, rdmaBuf, advert, recv}) {
            r.deregister();
        }
        startMemory.release();
        rdmaMemory.release();
        advertMemory.release();
        recvMemory.release();
    }
}
