package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.Transport;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.util.ResourceLeakDetector;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Counts, per message, what one side of a {@code compare} case does on its two event loops: the system calls of
 * each loop's thread (Linux {@code perf stat} on the syscall tracepoints, per thread, over the measured interval)
 * and, for our stack, what passes the head of each channel's pipeline (outbound entries written, with a real
 * promise, flushes, reads, read batches). Counts, unlike rates, do not depend on how loaded the machine is (only
 * on how much each read finds in the socket). Needs {@code perf} and the right to trace (root). Not part of
 * {@code compare}'s figures; the programs measured are {@code compare}'s own ({@link OursRun}, {@link RawRun}).
 *
 * <pre>java -cp benchmarks.jar dev.iwarp.benchmarks.compare.PerMessageCounts read-1k-crc-d128/epoll [seconds [ours|raw|both]]</pre>
 */
public final class PerMessageCounts {
    private static final String[] SYSCALLS = {"read", "recvfrom", "write", "writev", "sendmsg", "sendto",
        "epoll_wait", "epoll_pwait", "epoll_pwait2", "futex"};

    private static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();

    private PerMessageCounts() {
    }

    public static void main(String[] args) throws Exception {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        String name = args[0];
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 2;
        CompareCase c = CompareCase.all(List.of(Transport.EPOLL, Transport.NIO)).stream()
                .filter(k -> k.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no case " + name));
        System.out.println(name + ", " + seconds + " s after 1 s of warm-up, load average " + Compare.loadAverage());
        String sides = args.length > 2 ? args[2] : "both";
        if (!sides.equals("raw")) {
            count("ours", new OursRun(c), seconds);
        }
        if (!sides.equals("ours")) {
            count("raw ", new RawRun(c), seconds);
        }
    }

    private static void count(String side, CompareRun run, double seconds) throws Exception {
        try (run) {
            run.open();
            String clientTid = CompareRun.linuxTid(run.clientLoop);
            String serverTid = CompareRun.linuxTid(run.serverLoop);
            Counter clientCounter = attach(run.clientChannel);
            Counter serverCounter = attach(run.serverChannel);
            long clientId = CompareRun.threadOf(run.clientLoop).getId();
            long serverId = CompareRun.threadOf(run.serverLoop).getId();
            run.start();
            Thread.sleep(1000);
            // perf counts from its "enable" to its "disable": the messages and the pipeline counters are read
            // inside the same window (perf's own start-up, under load, took a tenth of a second or more of it)
            Perf perf = Perf.start(clientTid + "," + serverTid, seconds);
            long[] cc0 = snapshot(run.clientLoop, clientCounter);
            long[] sc0 = snapshot(run.serverLoop, serverCounter);
            long m0 = run.messages();
            long cpuC0 = THREADS.getThreadCpuTime(clientId);
            long cpuS0 = THREADS.getThreadCpuTime(serverId);
            Thread.sleep((long) (seconds * 1000));
            long m1 = run.messages();
            long cpuC1 = THREADS.getThreadCpuTime(clientId);
            long cpuS1 = THREADS.getThreadCpuTime(serverId);
            long[] cc1 = snapshot(run.clientLoop, clientCounter);
            long[] sc1 = snapshot(run.serverLoop, serverCounter);
            Map<String, Map<String, Long>> syscalls = perf.stop();
            run.stopped = true;
            double n = m1 - m0;
            StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
                    "%s %,d messages, CPU us per message client/server %.2f/%.2f%s%n", side, (long) n,
                    (cpuC1 - cpuC0) / 1e3 / n, (cpuS1 - cpuS0) / 1e3 / n, run.failure != null ? " FAILED " + run.failure : ""));
            line(sb, "client", syscalls.get(clientTid), cc0, cc1, n);
            line(sb, "server", syscalls.get(serverTid), sc0, sc1, n);
            System.out.print(sb);
        }
    }

    private static void line(StringBuilder sb, String who, Map<String, Long> sys, long[] c0, long[] c1, double n) {
        sb.append("  ").append(who).append(" per message:");
        if (sys != null) {
            for (Map.Entry<String, Long> e : sys.entrySet()) {
                if (e.getValue() > 0) {
                    sb.append(String.format(Locale.ROOT, " %s %.4f", e.getKey(), e.getValue() / n));
                }
            }
        }
        if (c0 != null) {
            for (int i = 0; i < Counter.NAMES.length; i++) {
                sb.append(String.format(Locale.ROOT, " %s %.4f", Counter.NAMES[i], (c1[i] - c0[i]) / n));
            }
        }
        sb.append(System.lineSeparator());
    }


    private static Counter attach(Channel ch) throws Exception {
        if (ch == null) {
            return null;
        }
        Counter counter = new Counter();
        ch.eventLoop().submit(() -> ch.pipeline().addFirst("per-message-counts", counter)).get(10, TimeUnit.SECONDS);
        return counter;
    }

    private static long[] snapshot(EventLoop loop, Counter c) throws Exception {
        return c == null ? null : loop.submit(c::values).get(10, TimeUnit.SECONDS);
    }

    /**
     * {@code perf stat} on some threads, counting only between {@link #start} and {@link #stop}: started disabled
     * ({@code -D -1}) and switched through its control FIFOs, each switch acknowledged before it returns.
     */
    private static final class Perf {
        private final Process process;
        private final Path dir;
        private final java.io.OutputStream control;
        private final java.io.InputStream ack;

        private Perf(Process process, Path dir, java.io.OutputStream control, java.io.InputStream ack) {
            this.process = process;
            this.dir = dir;
            this.control = control;
            this.ack = ack;
        }

        /** Starts perf on the threads {@code tids} and returns once it counts. */
        static Perf start(String tids, double seconds) throws Exception {
            StringBuilder events = new StringBuilder("context-switches");
            for (String s : SYSCALLS) {
                events.append(",syscalls:sys_enter_").append(s);
            }
            Path dir = Files.createTempDirectory("per-message-counts");
            Path ctl = dir.resolve("ctl");
            Path ack = dir.resolve("ack");
            for (Path fifo : new Path[] {ctl, ack}) {
                if (new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() != 0) {
                    throw new IllegalStateException("mkfifo " + fifo + " failed");
                }
            }
            // the workload outlives the window; perf exits with it, counting nothing after "disable"
            Process p = new ProcessBuilder("perf", "stat", "-x,", "--per-thread", "-t", tids, "-e", events.toString(),
                    "-D", "-1", "--control", "fifo:" + ctl + "," + ack, "--", "sleep",
                    String.valueOf((long) Math.ceil(seconds) + 3)).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            Perf perf = new Perf(p, dir, Files.newOutputStream(ctl), Files.newInputStream(ack));
            perf.command("enable");
            return perf;
        }

        private void command(String c) throws java.io.IOException {
            control.write((c + "\n").getBytes(StandardCharsets.US_ASCII));
            control.flush();
            byte[] b = new byte[5]; // "ack\n\0"
            if (ack.read(b) <= 0) {
                throw new java.io.IOException("perf did not acknowledge " + c);
            }
        }

        /** Stops counting; per thread id, per system call, the count. */
        Map<String, Map<String, Long>> stop() throws Exception {
            command("disable");
            control.close();
            ack.close();
            String out = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            process.waitFor();
            Files.deleteIfExists(dir.resolve("ctl"));
            Files.deleteIfExists(dir.resolve("ack"));
            Files.deleteIfExists(dir);
            Map<String, Map<String, Long>> byTid = new LinkedHashMap<>();
            for (String l : out.split("\n")) {
                String[] f = l.split(",");
                if (f.length < 4 || f[0].lastIndexOf('-') < 0) {
                    continue;
                }
                String tid = f[0].substring(f[0].lastIndexOf('-') + 1).trim();
                long v;
                try {
                    v = Long.parseLong(f[1].trim());
                } catch (NumberFormatException e) {
                    continue;
                }
                byTid.computeIfAbsent(tid, k -> new LinkedHashMap<>()).put(f[3].replace("syscalls:sys_enter_", ""), v);
            }
            if (byTid.isEmpty()) {
                System.out.println("perf: " + out.trim());
            }
            return byTid;
        }
    }

    /** What passes the head of a pipeline: outbound entries, real promises, octets, flushes, reads, read batches. */
    static final class Counter extends ChannelDuplexHandler {
        static final String[] NAMES = {"entries", "promises", "flushes", "reads", "readBatches"};
        private long entries;
        private long promises;
        private long flushes;
        private long reads;
        private long readBatches;

        long[] values() {
            return new long[] {entries, promises, flushes, reads, readBatches};
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            entries++;
            if (!promise.isVoid()) {
                promises++;
            }
            ctx.write(msg, promise);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes++;
            ctx.flush();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf) {
                reads++;
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            readBatches++;
            ctx.fireChannelReadComplete();
        }
    }
}
