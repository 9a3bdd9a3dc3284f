package dev.iwarp.benchmarks;

import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.mpa.MpaParameters;
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

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * RDMA Write goodput on 127.0.0.1 for MPA in the clear, MPA in TLS 1.3 with MULPDU from the TCP MSS
 * (EMSS 1460), and MPA in TLS 1.3 with MULPDU from the TLS record (EMSS 16384, the default over
 * TLS): the measurement behind the choice of MULPDU over TLS. Rounds interleave the three cases (A B
 * C A B C ...) so load on a shared machine hits them alike; prints each round and the medians of
 * goodput and of process CPU time per MiB (both sides run in this process; CPU per MiB is the
 * steadier figure on a loaded machine). A
 * measuring tool, not a test: {@code java -cp benchmarks/target/benchmarks.jar
 * dev.iwarp.benchmarks.TlsMulpduThroughput [size] [seconds-per-round] [rounds] [depth]}.
 */
public final class TlsMulpduThroughput {
    private TlsMulpduThroughput() {
    }

    private enum Case {
        PLAIN("MPA, no TLS", 0, false), TLS_MSS("MPA in TLS, MULPDU from EMSS 1460", 1460, true),
        TLS_RECORD("MPA in TLS, MULPDU from the TLS record", 0, true);

        final String label;
        final int emss;
        final boolean tls;

        Case(String label, int emss, boolean tls) {
            this.label = label;
            this.emss = emss;
            this.tls = tls;
        }
    }

    public static void main(String[] args) throws Exception {
        int size = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        int depth = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        TlsCertificates.CertifiedKey id = TlsCertificates.selfSigned("bench", Duration.ofDays(1));
        TlsSettings serverTls = TlsSettings.builder().identity(id).build();
        TlsSettings clientTls = TlsSettings.builder().pin(id.fingerprint()).build();
        List<List<double[]>> results = new ArrayList<>();
        for (Case c : Case.values()) {
            results.add(new ArrayList<>());
        }
        for (int r = 0; r <= rounds; r++) { // round 0 warms the JIT up and is not counted
            for (Case c : Case.values()) {
                double[] m = run(c, size, seconds, depth, serverTls, clientTls, r == 0);
                System.out.printf("round %d%s %-42s %8.1f MB/s %8.2f ms CPU/MiB%n", r, r == 0 ? " (warm-up)" : "",
                        c.label, m[0], m[1]);
                if (r > 0) {
                    results.get(c.ordinal()).add(m);
                }
            }
        }
        System.out.printf("median of %d rounds, RDMA Write %d octets, depth %d, CRC on (CPU: both sides, one process):%n",
                rounds, size, depth);
        for (Case c : Case.values()) {
            System.out.printf("  %-42s %8.1f MB/s %8.2f ms CPU/MiB%n", c.label, median(results.get(c.ordinal()), 0),
                    median(results.get(c.ordinal()), 1));
        }
        System.out.println("rounds: " + Arrays.toString(Case.values()));
    }

    private static double median(List<double[]> rows, int column) {
        double[] v = rows.stream().mapToDouble(m -> m[column]).sorted().toArray();
        return v[v.length / 2];
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Goodput in MB/s and process CPU time per MiB written, in ms. */
    private static double[] run(Case c, int size, int seconds, int depth, TlsSettings serverTls, TlsSettings clientTls,
                                boolean describe) throws Exception {
        MpaSettings mpa = MpaSettings.builder().emss(c.emss).build();
        try (IwarpStack server = IwarpStack.builder().threads(1).build();
             IwarpStack client = IwarpStack.builder().threads(1).build()) {
            ProtectionDomain spd = server.allocPd();
            ByteBuf target = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeZero(size);
            MemoryRegion targetMr = spd.register(target, Access.REMOTE_WRITE);
            Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), ListenOptions.mpa(mpa).tls(c.tls ? serverTls : null),
                    req -> req.accept(spd, new CompletionQueue(), new CompletionQueue(), new byte[0]));
            ProtectionDomain cpd = client.allocPd();
            ByteBuf src = PooledByteBufAllocator.DEFAULT.directBuffer(size, size).writeZero(size);
            MemoryRegion srcMr = cpd.register(src, Access.LOCAL_WRITE);
            ConnectOptions opts = ConnectOptions.of(cpd).mpa(mpa).tls(c.tls ? clientTls : null);
            QueuePair qp = client.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
            if (describe) {
                System.out.printf("%s: transport %s, MULPDU %d%n", c.label, client.transport(),
                        qp.connectionParameters().framing(MpaParameters.class).mulpdu());
            }
            CompletionQueue cq = opts.sendCq();
            long wr = 0;
            for (int i = 0; i < depth; i++) {
                qp.postSend(SendRequest.rdmaWrite(wr++, srcMr.all(), targetMr.stag(), targetMr.iova()));
            }
            long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            long start = 0;
            long cpuStart = 0;
            long counted = 0;
            double[] result;
            while (true) {
                Completion done = cq.take(10, TimeUnit.SECONDS);
                if (done == null || !done.isSuccess()) {
                    throw new IllegalStateException("write failed: " + done);
                }
                long now = System.nanoTime();
                if (start == 0 && now >= warmupEnd) {
                    start = now;
                    cpuStart = processCpuNanos();
                } else if (start != 0) {
                    counted++;
                    if (now - start >= TimeUnit.SECONDS.toNanos(seconds)) {
                        double bytes = counted * (double) size;
                        result = new double[] {bytes / ((now - start) / 1e9) / 1e6,
                                (processCpuNanos() - cpuStart) / 1e6 / (bytes / (1 << 20))};
                        break;
                    }
                }
                qp.postSend(SendRequest.rdmaWrite(wr++, srcMr.all(), targetMr.stag(), targetMr.iova()));
            }
            qp.close().await(5, TimeUnit.SECONDS);
            listener.close().sync();
            src.release();
            target.release();
            return result;
        }
    }
}
