package dev.iwarp.benchmarks.compare.process;

import dev.iwarp.bootstrap.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.ResourceLeakDetector;
import org.HdrHistogram.Histogram;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The raw Netty client process of {@code compare --processes}, against {@link RawPeer}: {@code --connections}
 * connections (default 1) on as many event loops as {@code bench} takes for them (one, two from two connections on),
 * TCP_NODELAY, the transport asked for; each connection runs the case, driven from its event loop as bench drives
 * ours, and the figures are their sums (latency: every connection's messages).
 * <ul>
 *   <li>{@code write}: bulk writes of one pooled direct buffer (retained duplicates) while writable, high water
 *       mark depth x size and at least 1 MiB; a message counts when its last octet reached the peer's sink (the
 *       peer's count, read with its cost line);</li>
 *   <li>{@code read}, {@code --raw-read request-response} (the default): 28-octet requests, at most depth
 *       outstanding, each answered by the peer with size octets; a message counts when its response's last octet
 *       arrived ({@link RawRead});</li>
 *   <li>{@code read}, {@code --raw-read stream}: the peer writes while writable, this side releases what it reads
 *       and counts it;</li>
 *   <li>{@code pingpong} / {@code pipeline}: 4-octet length-prefixed frames echoed, at most depth not yet echoed
 *       (ping-pong: depth 1), latency from write to echo.</li>
 * </ul>
 * Warm-up for {@code --warmup} seconds (or {@code stable}: until the rate holds, at most {@code --warmup-max}
 * seconds, {@link StableRate}), then {@code --seconds} measured, bracketed by two cost questions to the peer; prints
 * one JSON line with bench's field names. Usage: {@code RawClient --port N --transport T --case C --size N --depth N
 * --warmup S|stable [--warmup-max S] --seconds S [--connections N] [--raw-read request-response|stream]}.
 */
public final class RawClient {
    /** bench's event loops for its connections: one per connection, at most two (iwarp-server's BenchCommand). */
    static final int MAX_LOOPS = 2;

    private final String op;
    private final int size;
    private final int depth;
    private final RawRead.Mode rawRead;
    private final List<Conn> connections = new ArrayList<>();
    private volatile boolean stopped;

    private RawClient(String op, int size, int depth, RawRead.Mode rawRead) {
        this.op = op;
        this.size = size;
        this.depth = op.equals("pingpong") ? 1 : depth;
        this.rawRead = rawRead;
    }

    public static void main(String[] args) throws Exception {
        String host = "127.0.0.1";
        int port = 0;
        Transport transport = Transport.auto();
        String op = "write";
        int size = 65536;
        int depth = 16;
        double warmup = 1;
        double warmupMax = 10;
        double seconds = 2;
        int connections = 1;
        RawRead.Mode rawRead = RawRead.Mode.REQUEST_RESPONSE;
        for (int i = 0; i < args.length; i++) {
            String v = args[++i];
            switch (args[i - 1]) {
                case "--host" -> host = v;
                case "--port" -> port = Integer.parseInt(v);
                case "--transport" -> transport = Transport.parse(v);
                case "--case" -> op = v;
                case "--size" -> size = Integer.parseInt(v);
                case "--depth" -> depth = Integer.parseInt(v);
                case "--warmup" -> warmup = v.equals("stable") ? WARMUP_STABLE : Double.parseDouble(v);
                case "--warmup-max" -> warmupMax = Double.parseDouble(v);
                case "--seconds" -> seconds = Double.parseDouble(v);
                case "--connections" -> connections = Integer.parseInt(v);
                case "--raw-read" -> rawRead = RawRead.Mode.parse(v);
                default -> throw new IllegalArgumentException("unknown argument " + args[i - 1]);
            }
        }
        transport.checkAvailable();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        ((com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean())
                .setThreadAllocatedMemoryEnabled(true);
        System.out.println(new RawClient(op, size, depth, rawRead).run(new InetSocketAddress(host, port), transport, connections,
                warmup, warmupMax, seconds));
    }

    /** The header's mode for the peer ({@link RawPeer}): S sink, R responder, W source, E echo. */
    static char mode(String op, RawRead.Mode rawRead) {
        return switch (op) {
            case "write" -> 'S';
            case "read" -> rawRead == RawRead.Mode.REQUEST_RESPONSE ? 'R' : 'W';
            default -> 'E';
        };
    }

    /** A Read case on the request/response baseline. */
    private boolean requestResponse() {
        return op.equals("read") && rawRead == RawRead.Mode.REQUEST_RESPONSE;
    }

    private boolean framed() {
        return op.equals("pingpong") || op.equals("pipeline");
    }

    private String run(InetSocketAddress peer, Transport transport, int count, double warmup, double warmupMax,
                       double seconds) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(Math.min(count, MAX_LOOPS),
                transport.ioHandlerFactory());
        try {
            int high = (int) Math.min(Integer.MAX_VALUE / 2, Math.max(1 << 20, (long) depth * size));
            Bootstrap b = new Bootstrap().group(group).channel(transport.socketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(high / 2, high));
            char mode = mode(op, rawRead);
            for (int i = 0; i < count; i++) {
                Conn c = new Conn();
                connections.add(c);
                c.open(b, peer, mode);
            }
            for (Conn c : connections) {
                c.channel.eventLoop().execute(c::start);
            }
            if (warmup == WARMUP_STABLE) {
                warmUntilStable(peer, warmupMax);
            } else {
                Thread.sleep((long) (warmup * 1000));
            }
            // all at once, then waited for: a loop busy with many connections is slow to come round to each task
            List<Future<?>> resets = new ArrayList<>();
            for (Conn c : connections) {
                resets.add(c.channel.eventLoop().submit(c.latency::reset));
            }
            for (Future<?> f : resets) {
                f.get(60, TimeUnit.SECONDS);
            }
            long[] peer0 = askPeer(peer);
            ProcessCost own0 = ProcessCost.now();
            long m0 = counted(peer0);
            long t0 = System.nanoTime();
            Thread.sleep((long) (seconds * 1000));
            long t1 = System.nanoTime();
            ProcessCost own1 = ProcessCost.now();
            long[] peer1 = askPeer(peer);
            long m1 = counted(peer1);
            List<Future<Histogram>> copies = new ArrayList<>();
            for (Conn c : connections) {
                copies.add(c.channel.eventLoop().submit(c.latency::copy));
            }
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            for (Future<Histogram> f : copies) {
                h.add(f.get(60, TimeUnit.SECONDS));
            }
            stopped = true;
            double n = m1 - m0;
            double secs = (t1 - t0) / 1e9;
            return String.format(Locale.ROOT, "{\"op\": \"%s\", \"bytes\": %d, \"depth\": %d, \"connections\": %d, "
                            + "\"iterations\": %d, \"seconds\": %.6f, \"gbit_per_sec\": %s, \"msg_rate_mpps\": %s, "
                            + "\"t_typical_usec\": %s, \"t_p99_usec\": %s, \"client_process_cpu_usec_per_msg\": %s, "
                            + "\"client_process_alloc_bytes_per_msg\": %s, \"server_cpu_usec_per_msg\": %s, "
                            + "\"server_alloc_bytes_per_msg\": %s, \"warmup_stable\": %s, \"warmup_windows\": %d}",
                    op, size, depth, count, (long) n, secs,
                    num(n * size * 8 / secs / 1e9), num(n / secs / 1e6),
                    num(h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(50) / 1e3),
                    num(h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1e3),
                    num(per(own1.cpuNanos() - own0.cpuNanos(), n) / 1e3),
                    num(per(own1.allocatedBytes() - own0.allocatedBytes(), n)),
                    num(per(peer1[0] - peer0[0], n) / 1e3), num(per(peer1[1] - peer0[1], n)),
                    warmup == WARMUP_STABLE ? String.valueOf(warmupStable) : "null", warmupWindows);
        } finally {
            stopped = true;
            for (Conn c : connections) {
                c.close();
            }
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** {@code --warmup stable}: the warm-up ends when the rate holds, by bench's rule ({@link StableRate}). */
    static final double WARMUP_STABLE = -1;

    private void warmUntilStable(InetSocketAddress peer, double maxSeconds) throws Exception {
        StableRate rate = new StableRate();
        long deadline = System.nanoTime() + (long) (maxSeconds * 1e9);
        long t = System.nanoTime();
        long c = counted(askPeer(peer));
        while (System.nanoTime() < deadline) {
            Thread.sleep(StableRate.WINDOW_MILLIS);
            long now = System.nanoTime();
            long c1 = counted(askPeer(peer));
            if (rate.add((c1 - c) * 1e9 / (now - t), now - t)) {
                break;
            }
            t = now;
            c = c1;
        }
        warmupStable = rate.stable();
        warmupWindows = rate.windows();
    }

    private boolean warmupStable;
    private int warmupWindows;

    /** Messages so far, all connections: Writes by the peer's sunk octets, Reads by ours, echoes counted. */
    private long counted(long[] peerCounters) {
        if (op.equals("write")) {
            return peerCounters[2] / size;
        }
        long n = 0;
        for (Conn c : connections) {
            n += requestResponse() ? c.requester.completed() : op.equals("read") ? c.receivedOctets / size : c.messages;
        }
        return n;
    }

    private static double per(long counter, double n) {
        return n <= 0 ? Double.NaN : counter / n;
    }

    private static String num(double d) {
        return Double.isNaN(d) || Double.isInfinite(d) ? "null" : String.format(Locale.ROOT, "%.6f", d);
    }

    /** The peer's CPU nanoseconds, allocated octets and sunk octets, on a connection of its own. */
    private static long[] askPeer(InetSocketAddress peer) throws Exception {
        try (Socket s = new Socket(peer.getAddress(), peer.getPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(new byte[] {'C', 0, 0, 0, 0, 0, 0, 0, 0});
            out.flush();
            String line = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
                    .readLine();
            String[] f = line.trim().split(" ");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])};
        }
    }

    /** One connection and its traffic; everything but the volatile counters on its event loop. */
    private final class Conn {
        final Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final long[] sentAt = new long[depth];
        volatile long messages; // single writer: the event loop
        volatile long receivedOctets;
        long sentIndex;
        long echoedIndex;
        Channel channel;
        RawRead.Requester requester; // request/response Reads
        ByteBuf message; // each connection its own, as each of bench's has its own source buffer

        void open(Bootstrap b, InetSocketAddress peer, char mode) throws InterruptedException {
            int prefix = framed() ? 4 : 0;
            message = PooledByteBufAllocator.DEFAULT.directBuffer(prefix + size);
            if (framed()) {
                message.writeInt(size);
            }
            message.writeZero(size);
            channel = b.clone().handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    if (requestResponse()) {
                        requester = new RawRead.Requester(size, depth, () -> stopped);
                        ch.pipeline().addLast(requester);
                        return;
                    }
                    if (framed()) {
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(1 << 24, 0, 4, 0, 4));
                    }
                    ch.pipeline().addLast(new Handler(Conn.this));
                }
            }).connect(peer).sync().channel();
            ByteBuf header = channel.alloc().buffer(RawPeer.HEADER).writeByte(mode).writeInt(size).writeInt(depth);
            channel.writeAndFlush(header).sync();
        }

        /** On the event loop. */
        void start() {
            if (requestResponse()) {
                requester.start();
                return;
            }
            if (op.equals("read")) {
                return; // the peer writes
            }
            pump();
        }

        void pump() {
            if (framed()) {
                while (!stopped && sentIndex - echoedIndex < depth) {
                    sentAt[(int) (sentIndex++ % depth)] = System.nanoTime();
                    channel.write(message.retainedDuplicate(), channel.voidPromise());
                }
            } else {
                while (!stopped && channel.isWritable()) {
                    channel.write(message.retainedDuplicate(), channel.voidPromise());
                }
            }
            channel.flush();
        }

        void close() {
            if (channel != null) {
                channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            }
            if (message != null) {
                message.release();
            }
        }
    }

    private final class Handler extends ChannelInboundHandlerAdapter {
        private final Conn c;

        Handler(Conn c) {
            this.c = c;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            if (framed()) {
                long now = System.nanoTime();
                c.latency.recordValue(Math.min(now - c.sentAt[(int) (c.echoedIndex++ % depth)],
                        c.latency.getHighestTrackableValue()));
                c.messages++;
                if (op.equals("pingpong")) {
                    c.pump(); // one in flight: the next leaves at once, as the raw one-JVM ping-pong does
                }
            } else {
                c.receivedOctets += b.readableBytes();
            }
            b.release();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (op.equals("pipeline")) {
                c.pump(); // one flush per read batch
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (op.equals("write") && ctx.channel().isWritable()) {
                c.pump();
            }
        }
    }
}
