package dev.iwarp.benchmarks;

import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * End-to-end RDMA Write throughput between two {@link IwarpStack}s on 127.0.0.1: one connection,
 * {@code depth} Writes of {@code size} octets outstanding, CRC as given. Prints Gbit/s of payload.
 * A measuring tool, not a test: {@code java -cp benchmarks/target/benchmarks.jar
 * dev.iwarp.benchmarks.LoopbackWriteThroughput [size] [seconds] [depth] [crc]}.
 */
public final class LoopbackWriteThroughput {
    private LoopbackWriteThroughput() {
    }

    public static void main(String[] args) throws Exception {
        int size = args.length > 0 ? Integer.parseInt(args[0]) : 65536;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int depth = args.length > 2 ? Integer.parseInt(args[2]) : 16;
        boolean crc = args.length <= 3 || Boolean.parseBoolean(args[3]);
        try (IwarpStack server = IwarpStack.builder().threads(1).build();
             IwarpStack client = IwarpStack.builder().threads(1).build()) {
            ProtectionDomain spd = server.allocPd();
            ByteBuf target = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeZero(size);
            MemoryRegion targetMr = spd.register(target, Access.REMOTE_WRITE);
            Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0),
                    MpaSettings.builder().crc(crc).build(),
                    req -> req.accept(spd, new CompletionQueue(), new CompletionQueue(), new byte[0]));
            ProtectionDomain cpd = client.allocPd();
            ByteBuf src = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeZero(size);
            MemoryRegion srcMr = cpd.register(src, Access.LOCAL_WRITE);
            ConnectOptions opts = ConnectOptions.of(cpd).mpa(MpaSettings.builder().crc(crc).build());
            QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
            CompletionQueue cq = opts.sendCq();
            System.out.printf("transport %s, %s, message %d octets, depth %d, %d s%n", client.transport(),
                    qp.connectionParameters().framing(MpaParameters.class), size, depth, seconds);
            long wr = 0;
            for (int i = 0; i < depth; i++) {
                qp.postSend(SendRequest.rdmaWrite(wr++, srcMr.all(), targetMr.stag(), targetMr.iova()));
            }
            long completed = 0;
            long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            long start = 0;
            long end = warmupEnd + TimeUnit.SECONDS.toNanos(seconds);
            long counted = 0;
            while (true) {
                Completion c = cq.take(10, TimeUnit.SECONDS);
                if (c == null || !c.isSuccess()) {
                    throw new IllegalStateException("write failed: " + c);
                }
                completed++;
                long now = System.nanoTime();
                if (start == 0 && now >= warmupEnd) {
                    start = now;
                    counted = 0;
                } else if (start != 0) {
                    counted++;
                }
                if (start != 0 && now >= end) {
                    double secs = (now - start) / 1e9;
                    System.out.printf("RDMA Write %d octets: %.2f Gbit/s, %.0f writes/s (%d writes in %.2f s)%n", size,
                            counted * (double) size * 8 / secs / 1e9, counted / secs, counted, secs);
                    break;
                }
                qp.postSend(SendRequest.rdmaWrite(wr++, srcMr.all(), targetMr.stag(), targetMr.iova()));
            }
            qp.close().await(5, TimeUnit.SECONDS);
            listener.close().sync();
            src.release();
            target.release();
        }
    }
}
