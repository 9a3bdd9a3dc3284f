package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.BlockingCompletions;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code bench} client, on any wire: RDMA Writes or Reads against the target region {@code serve}
 * advertises in its MPA Reply Private Data, VI/TCP ConnectAccept or (IFT) first Send ({@link Advertisement}),
 * or Sends that {@code serve} echoes.
 */
final class Bench {
    enum Op { write, read, send }

    /**
     * What a run measured; latencies in nanoseconds from posting to completion (send: round trip).
     *
     * @param summary   the negotiated wire parameters in one phrase ("MPA Rev 2 CRC on", "VI/TCP ... CRC off")
     * @param crc       the framing carried a CRC
     * @param readDepth RDMA Reads allowed outstanding (MPA ORD; VI RDMA Read Window)
     */
    record Result(Op op, int size, int depth, long iterations, long bytes, long nanos, Histogram latency,
                  String summary, boolean crc, int readDepth) {
        /** Several connections' results as one: summed work over the longest run, latencies merged. */
        static Result merge(List<Result> results) {
            Result first = results.get(0);
            Histogram all = new Histogram(3);
            long iterations = 0;
            long bytes = 0;
            long nanos = 0;
            for (Result r : results) {
                all.add(r.latency());
                iterations += r.iterations();
                bytes += r.bytes();
                nanos = Math.max(nanos, r.nanos());
            }
            return new Result(first.op(), first.size(), first.depth(), iterations, bytes, nanos, all,
                    first.summary(), first.crc(), first.readDepth());
        }

        double gbitPerSecond() {
            return bytes * 8.0 / nanos;
        }

        double messagesPerSecond() {
            return iterations * 1e9 / nanos;
        }
    }

    private Bench() {
    }

    /** iWARP on {@code stack}: see {@link #run(ClientWire, InetSocketAddress, Op, int, long, long, int, boolean, long, AtomicLong)}. */
    static Result run(IwarpStack stack, InetSocketAddress server, Op op, int size, long iterations, long durationNanos,
                      int depth, boolean crc, long timeoutMs) throws IOException {
        return run(IwarpWire.client(stack), server, op, size, iterations, durationNanos, depth, crc, timeoutMs,
                new AtomicLong());
    }

    /**
     * Runs {@code iterations} operations, or as many as fit in {@code durationNanos} when that is positive, with
     * up to {@code depth} outstanding (Sends: 1, the server keeps one receive posted); adds the octets of every
     * completed operation to {@code progress} as it goes.
     */
    static Result run(ClientWire wire, InetSocketAddress server, Op op, int size, long iterations, long durationNanos,
                      int depth, boolean crc, long timeoutMs, AtomicLong progress) throws IOException {
        if (op == Op.send && size == Advertisement.LENGTH) {
            throw new IllegalArgumentException("a 16-octet Send is an rping advertisement to serve; use another size");
        }
        if (size < 1 || (op == Op.send && size > RpingSession.BUFFER_SIZE)) {
            throw new IllegalArgumentException("size out of range: " + size);
        }
        int outstanding = op == Op.send ? 1 : Math.max(1, depth);
        WireDomain domain = wire.allocDomain();
        ByteBuf memory = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        ByteBuf recvMemory = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        byte[] pattern = new byte[size];
        for (int i = 0; i < size; i++) {
            pattern[i] = (byte) (i * 31 + 7);
        }
        memory.setBytes(0, pattern);
        WireRegion local = domain.register(memory, WireAccess.LOCAL_WRITE);
        WireRegion recv = domain.register(recvMemory, WireAccess.LOCAL_WRITE);
        BlockingCompletions completions = new BlockingCompletions();
        WireConnection conn = null;
        try {
            conn = wire.connect(server, domain, crc, op == Op.read ? outstanding : 1, completions, c -> { },
                    timeoutMs);
            Advertisement target = null;
            if (op != Op.send) {
                byte[] setup = conn.peerData();
                if (setup.length != Advertisement.LENGTH) {
                    throw new IOException("the server advertised no target region in its "
                            + (wire.name().equals("vitcp") ? "ConnectAccept" : wire.name().equals("ift")
                            ? "setup Send (IFT)" : "MPA Reply")
                            + " (got " + setup.length + " octets; serve --target-size)");
                }
                target = Advertisement.decode(setup);
                if (size > target.sizeUnsigned()) {
                    throw new IOException("size " + size + " exceeds the server's target region ("
                            + (wire.name().equals("vitcp") ? target.toViString() : target.toString()) + ")");
                }
            }
            return loop(conn, completions, op, local, recv, target, size, iterations, durationNanos, outstanding,
                    timeoutMs, progress);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            if (conn != null) {
                conn.channel().close().awaitUninterruptibly(timeoutMs);
            }
            local.deregister();
            recv.deregister();
            memory.release();
            recvMemory.release();
        }
    }

    private static Result loop(WireConnection conn, BlockingCompletions cq, Op op, WireRegion local, WireRegion recv,
                               Advertisement target, int size, long iterations, long durationNanos, int depth,
                               long timeoutMs, AtomicLong progress) throws IOException, InterruptedException {
        Histogram latency = new Histogram(3);
        long[] postedAt = new long[depth]; // completions arrive in posting order (RFC 5040 §5.5; VI work queues)
        long posted = 0;
        long completed = 0;
        long start = System.nanoTime();
        long deadline = durationNanos > 0 ? start + durationNanos : Long.MAX_VALUE;
        while (true) {
            while (posted - completed < depth && (durationNanos > 0 ? System.nanoTime() < deadline : posted < iterations)) {
                postedAt[(int) (posted % depth)] = System.nanoTime();
                switch (op) {
                    case write -> conn.postRdmaWrite(posted, local, 0, size, target.to(), target.stag());
                    case read -> conn.postRdmaRead(posted, local, 0, size, target.to(), target.stag());
                    default -> {
                        conn.postRecv(posted, recv, 0, size);
                        conn.postSend(posted, local, 0, size);
                    }
                }
                posted++;
            }
            if (completed == posted) {
                break;
            }
            cq.take(false, timeoutMs, "a work request");
            if (op == Op.send) {
                BlockingCompletions.Done echo = cq.take(true, timeoutMs, "the echo of a Send");
                if (echo.byteLength() != size) {
                    throw new IOException("echo of " + echo.byteLength() + " octets for a Send of " + size);
                }
            }
            latency.recordValue(System.nanoTime() - postedAt[(int) (completed % depth)]);
            completed++;
            progress.addAndGet(size);
        }
        long nanos = Math.max(1, System.nanoTime() - start);
        return new Result(op, size, depth, completed, completed * size, nanos, latency, conn.summary(), conn.crc(),
                conn.readDepth());
    }
}
