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
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The {@code bench} client: RDMA Writes or Reads against the target region {@code serve} advertises
 * in its MPA Reply Private Data ({@link Advertisement}), or Sends that {@code serve} echoes.
 */
final class Bench {
    enum Op { write, read, send }

    /** What a run measured; latencies in nanoseconds from posting to completion (send: round trip). */
    record Result(Op op, int size, int depth, long iterations, long bytes, long nanos, Histogram latency,
                  MpaParameters mpa) {
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
            return new Result(first.op(), first.size(), first.depth(), iterations, bytes, nanos, all, first.mpa());
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

    /**
     * Runs {@code iterations} operations, or as many as fit in {@code durationNanos} when that is
     * positive, with up to {@code depth} outstanding (Sends: 1, the server keeps one receive posted).
     */
    static Result run(IwarpStack stack, InetSocketAddress server, Op op, int size, long iterations, long durationNanos,
                      int depth, boolean crc, long timeoutMs) throws IOException {
        return run(stack, server, op, size, iterations, durationNanos, depth, crc, timeoutMs, new AtomicLong());
    }

    /** As above; adds the octets of every completed operation to {@code progress} as it goes. */
    static Result run(IwarpStack stack, InetSocketAddress server, Op op, int size, long iterations, long durationNanos,
                      int depth, boolean crc, long timeoutMs, AtomicLong progress) throws IOException {
        if (op == Op.send && size == Advertisement.LENGTH) {
            throw new IllegalArgumentException("a 16-octet Send is an rping advertisement to serve; use another size");
        }
        if (size < 1 || (op == Op.send && size > RpingSession.BUFFER_SIZE)) {
            throw new IllegalArgumentException("size out of range: " + size);
        }
        int outstanding = op == Op.send ? 1 : Math.max(1, depth);
        ProtectionDomain pd = stack.allocPd();
        ByteBuf memory = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        ByteBuf recvMemory = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        byte[] pattern = new byte[size];
        for (int i = 0; i < size; i++) {
            pattern[i] = (byte) (i * 31 + 7);
        }
        memory.setBytes(0, pattern);
        MemoryRegion local = pd.register(memory, Access.LOCAL_WRITE);
        MemoryRegion recv = pd.register(recvMemory, Access.LOCAL_WRITE);
        ConnectOptions opts = ConnectOptions.of(pd)
                .mpa(MpaSettings.builder().revision(2).crc(crc).ird(1).ord(op == Op.read ? Math.min(outstanding, 128) : 1).build());
        QueuePair qp = null;
        try {
            qp = stack.connect(server, opts).get(timeoutMs, TimeUnit.MILLISECONDS);
            Advertisement target = null;
            if (op != Op.send) {
                byte[] pd0 = qp.mpaParameters().peerPrivateData();
                if (pd0.length != Advertisement.LENGTH) {
                    throw new IOException("the server advertised no target region in its MPA Reply "
                            + "(got " + pd0.length + " octets of Private Data; serve --target-size)");
                }
                target = Advertisement.decode(pd0);
                if (size > target.sizeUnsigned()) {
                    throw new IOException("size " + size + " exceeds the server's target region (" + target + ")");
                }
            }
            return loop(qp, opts.sendCq(), opts.recvCq(), op, local, recv, target, size, iterations, durationNanos,
                    outstanding, timeoutMs, progress);
        } catch (ExecutionException e) {
            throw new IOException("cannot connect to " + server + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException | InterruptedException e) {
            throw new IOException("cannot connect to " + server + " within " + timeoutMs + " ms", e);
        } finally {
            if (qp != null) {
                qp.channel().close().awaitUninterruptibly(timeoutMs);
            }
            local.deregister();
            recv.deregister();
            memory.release();
            recvMemory.release();
        }
    }

    private static Result loop(QueuePair qp, CompletionQueue sendCq, CompletionQueue recvCq, Op op, MemoryRegion local,
                               MemoryRegion recv, Advertisement target, int size, long iterations, long durationNanos,
                               int depth, long timeoutMs, AtomicLong progress) throws IOException, InterruptedException {
        Histogram latency = new Histogram(3);
        long[] postedAt = new long[depth]; // completions arrive in posting order (RFC 5040 §5.5)
        long posted = 0;
        long completed = 0;
        long start = System.nanoTime();
        long deadline = durationNanos > 0 ? start + durationNanos : Long.MAX_VALUE;
        while (true) {
            while (posted - completed < depth && (durationNanos > 0 ? System.nanoTime() < deadline : posted < iterations)) {
                postedAt[(int) (posted % depth)] = System.nanoTime();
                if (op == Op.send) {
                    qp.postRecv(RecvRequest.of(posted, recv.all()));
                }
                qp.postSend(request(op, posted, local, target));
                posted++;
            }
            if (completed == posted) {
                break;
            }
            take(sendCq, timeoutMs);
            if (op == Op.send) {
                Completion echo = take(recvCq, timeoutMs);
                if (echo.byteLength() != size) {
                    throw new IOException("echo of " + echo.byteLength() + " octets for a Send of " + size);
                }
            }
            latency.recordValue(System.nanoTime() - postedAt[(int) (completed % depth)]);
            completed++;
            progress.addAndGet(size);
        }
        long nanos = Math.max(1, System.nanoTime() - start);
        return new Result(op, size, depth, completed, completed * size, nanos, latency, qp.mpaParameters());
    }

    private static SendRequest request(Op op, long wrId, MemoryRegion local, Advertisement target) {
        switch (op) {
            case write:
                return SendRequest.rdmaWrite(wrId, local.all(), target.stag(), target.to());
            case read:
                return SendRequest.rdmaRead(wrId, local.all(), target.stag(), target.to());
            default:
                return SendRequest.send(wrId, local.all());
        }
    }

    private static Completion take(CompletionQueue cq, long timeoutMs) throws IOException, InterruptedException {
        Completion c = cq.take(timeoutMs, TimeUnit.MILLISECONDS);
        if (c == null) {
            throw new IOException("no completion within " + timeoutMs + " ms");
        }
        if (!c.isSuccess()) {
            throw new IOException("work request failed: " + c.status() + (c.detail() != null ? " (" + c.detail() + ")" : ""));
        }
        return c;
    }
}
