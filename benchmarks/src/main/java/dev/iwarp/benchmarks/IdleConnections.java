package dev.iwarp.benchmarks;

import dev.iwarp.bootstrap.tls.TlsLayer;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.ift.IftAdaptionCompletionEvent;
import dev.iwarp.ift.IftAdaptionHandler;
import dev.iwarp.ift.IftSettings;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupCompletionEvent;
import dev.iwarp.mpa.MpaStartupHandler;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A scale check: opens N MPA (or IFT, or TLS + MPA) connections to a running {@code serve} (full MPA startup, the target region
 * advertisement received in the Reply's Private Data), holds them idle, prints {@code serve}'s memory growth per
 * connection, then runs {@code ping} against {@code serve} while they are held. See benchmarks/README.md.
 */
@Command(name = "idle-connections", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Hold N idle MPA connections to a running serve and print its memory per connection.")
public final class IdleConnections implements Callable<Integer> {
    @Option(names = "--connections", description = "Connections to open and hold. Default ${DEFAULT-VALUE}.")
    int connections = 10_000;
    @Option(names = "--host", description = "serve's address. Default ${DEFAULT-VALUE}.")
    String host = "127.0.0.1";
    @Option(names = "--port", description = "serve's MPA port. Default ${DEFAULT-VALUE}.")
    int port = 7174;
    @Option(names = "--pid", description = "serve's process id (default: the process listening on --port).")
    long pid = -1;
    @Option(names = "--per-source", description = "On loopback, connections per source /24 (127.0.1.1, 127.0.2.1, "
            + "..., taken in turn), to stay under serve's --max-per-source and --max-startups-per-source, which count "
            + "per /24; 0: one source. Default ${DEFAULT-VALUE}.")
    int perSource = 250;
    @Option(names = "--first-prefix", description = "The first source /24 as its number after 127.0.0.0/24 (1: "
            + "127.0.1.0/24, 256: 127.1.0.0/24). Default ${DEFAULT-VALUE}.")
    int firstPrefix = 1;
    @Option(names = "--in-flight", description = "MPA startups in progress at once (serve's --max-startups is 512). "
            + "Default ${DEFAULT-VALUE}.")
    int inFlight = 200;
    @Option(names = "--hold", description = "Seconds to hold the connections idle before measuring. "
            + "Default ${DEFAULT-VALUE}.")
    int holdSec = 10;
    @Option(names = "--settle", description = "Seconds between the last connection opened and the start of the CPU "
            + "measurement: serve's JIT compiler and GC finish the opening burst's work. Default ${DEFAULT-VALUE}.")
    int settleSec = 5;
    @Option(names = "--max-cpu-percent", description = "Fail when serve's CPU while the connections are idle exceeds "
            + "this % of a core (a benchmark threshold); negative: no threshold. Default ${DEFAULT-VALUE}.")
    double maxCpuPercent = -1;
    @Option(names = "--max-rss-kib", description = "Fail when serve's RSS per held connection exceeds this many KiB; "
            + "negative: no threshold. Default ${DEFAULT-VALUE}.")
    double maxRssKib = -1;
    @Option(names = "--check-limits", description = "Also check that serve enforces its first-octet timeout, startup "
            + "timeout, message deadline and idle timeout within 25 % while the connections are held (serve's "
            + "defaults: 2 s, 10 s, 10 s, 60 s; give serve's values with the options below).")
    boolean checkLimits;
    @Option(names = "--first-octet-ms", description = "serve's --first-octet-timeout. Default ${DEFAULT-VALUE}.")
    long firstOctetMs = 2_000;
    @Option(names = "--startup-ms", description = "serve's --startup-timeout. Default ${DEFAULT-VALUE}.")
    long startupMs = 10_000;
    @Option(names = "--deadline-ms", description = "serve's --message-deadline. Default ${DEFAULT-VALUE}.")
    long deadlineMs = 10_000;
    @Option(names = "--idle-ms", description = "serve's --idle-timeout in ms. Default ${DEFAULT-VALUE}.")
    long idleMs = 60_000;
    @Option(names = "--crc", description = "Ask for MPA CRC.")
    boolean crc;
    @Option(names = "--wire", description = "mpa (an MPA Request, then nothing) or ift (serve --wire ift: IFT's "
            + "adaption indication, then nothing). Default ${DEFAULT-VALUE}.")
    String wire = "mpa";
    @Option(names = "--tls-pin", paramLabel = "SHA256", description = "TLS 1.3 to a serve --tls whose certificate "
            + "has this SHA-256 fingerprint (as serve logs it): the handshake, then the MPA Request, then nothing.")
    String tlsPin;
    @Option(names = "--tls-handshake-timeout", paramLabel = "MS", description = "With --tls-pin: the client's TLS "
            + "handshake timeout; on a loaded machine give serve --startup-timeout as much. Default ${DEFAULT-VALUE}.")
    long tlsHandshakeTimeoutMs = TlsSettings.DEFAULT_HANDSHAKE_TIMEOUT_MILLIS;
    @Option(names = "--open-timeout", description = "Seconds to wait for every startup to finish. "
            + "Default ${DEFAULT-VALUE}.")
    int openTimeoutSec = 120;
    @Option(names = "--latency-idle-port", description = "Port of a second serve that holds no connection: while the "
            + "connections are held, --latency-rounds A B rounds of bench --op send --depth 1 run against it (A) and "
            + "against --port (B); 0: none. Default ${DEFAULT-VALUE}.")
    int latencyIdlePort;
    @Option(names = "--latency-rounds", description = "A B rounds. Default ${DEFAULT-VALUE}.")
    int latencyRounds = 3;
    @Option(names = "--latency-iterations", description = "Echoed Sends per round. Default ${DEFAULT-VALUE}.")
    int latencyIterations = 2000;
    @Option(names = "--ping-jar", description = "The iwarp-server jar whose ping runs against serve while the "
            + "connections are held (empty: no ping). Default ${DEFAULT-VALUE}.")
    String pingJar = "iwarp-server/target/iwarp-server.jar";

    private static final String OUTCOME = "outcome";
    private final AtomicInteger established = new AtomicInteger();
    private final AtomicInteger rejected = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger noAdvertisement = new AtomicInteger();
    private final AtomicInteger closedByServe = new AtomicInteger();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private final AtomicReference<String> advertisement = new AtomicReference<>();
    private final Queue<Channel> held = new ConcurrentLinkedQueue<>();
    private volatile boolean closing;

    public static void main(String[] args) {
        System.exit(new CommandLine(new IdleConnections()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (!wire.equals("mpa") && !wire.equals("ift") || wire.equals("ift") && tlsPin != null) {
            System.err.println("idle-connections: --wire is mpa or ift, and --tls-pin goes with mpa");
            return 2;
        }
        if (perSource > 0 && (connections - 1) / perSource + firstPrefix > 65_000 || firstPrefix < 1) {
            System.err.println("idle-connections: sources beyond 127.253.255.0/24: raise --per-source or lower "
                    + "--first-prefix (>= 1)");
            return 2;
        }
        long servePid = pid > 0 ? pid : ProcessMemory.pidListeningOn(port);
        if (servePid <= 0) {
            System.err.println("idle-connections: no process listening on TCP port " + port + " (give --pid)");
            return 2;
        }
        System.out.printf("serve: pid %d on %s:%d; this client's open-files limit %s%n", servePid, host, port,
                openFilesLimit());
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1,
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        try (ProcessMemory serve = new ProcessMemory(servePid)) {
            if (serve.jmxProblem() != null) {
                System.out.println("no heap/direct figures (JMX attach failed: " + serve.jmxProblem() + ")");
            }
            ProcessMemory.Reading before = serve.read();
            KernelSockets.Reading kernelBefore = KernelSockets.read();
            System.out.println("before:  " + describe(before));
            System.out.println("         " + KernelSockets.describe(kernelBefore));
            LimitProbes probes = checkLimits ? new LimitProbes(new InetSocketAddress(
                    InetAddress.getByName(host), port), firstOctetMs, startupMs, deadlineMs, idleMs) : null;
            if (probes != null) {
                probes.held(() -> closing ? 0 : established.get() - closedByServe.get());
                probes.startIdle(); // before the others: it must close while all of them are held
            }
            long t0 = System.nanoTime();
            connectAll(group, epoll);
            System.out.printf("opened %d connections in %.1f s: %d established with an advertisement (%s), "
                            + "%d without one, %d rejected (MPA Reply R=1), %d failed%s%n", connections,
                    (System.nanoTime() - t0) / 1e9, established.get() - noAdvertisement.get(), advertisement.get(),
                    noAdvertisement.get(), rejected.get(), failed.get(),
                    firstFailure.get() != null ? " (first: " + firstFailure.get() + ")" : "");
            Thread.sleep(TimeUnit.SECONDS.toMillis(settleSec));
            long ticks = ProcessMemory.cpuTicks(servePid);
            long heldAt = System.nanoTime();
            Thread.sleep(TimeUnit.SECONDS.toMillis(holdSec));
            double cpu = (ProcessMemory.cpuTicks(servePid) - ticks) / 100.0 / ((System.nanoTime() - heldAt) / 1e9);
            ProcessMemory.Reading after = serve.read();
            KernelSockets.Reading kernelAfter = KernelSockets.read();
            int open = established.get() - closedByServe.get();
            System.out.printf("held:    %s, %d connections open; serve's CPU while they were idle: %.1f %% of a core "
                    + "(over %d s)%n", describe(after), open, cpu * 100, holdSec);
            System.out.println("         " + KernelSockets.describe(kernelAfter));
            System.out.println(perConnection(before, after, open));
            System.out.println(KernelSockets.perConnection(kernelBefore, kernelAfter, open));
            double rssKib = open > 0 ? (after.rssBytes() - before.rssBytes()) / 1024.0 / open : 0;
            boolean withinThresholds = true;
            if (maxCpuPercent >= 0 && cpu * 100 > maxCpuPercent) {
                System.out.printf("FAILED: serve's idle CPU %.1f %% of a core is above %.1f %%%n", cpu * 100,
                        maxCpuPercent);
                withinThresholds = false;
            }
            if (maxRssKib >= 0 && rssKib > maxRssKib) {
                System.out.printf("FAILED: serve's RSS per connection %.1f KiB is above %.1f KiB%n", rssKib, maxRssKib);
                withinThresholds = false;
            }
            if (probes != null) {
                probes.startOthers();
            }
            boolean pinged = pingJar.isEmpty() || IdleLatency.ping(javaCommand(), pingJar, host, port, clientOptions());
            if (latencyIdlePort > 0 && !pingJar.isEmpty()) {
                pinged &= IdleLatency.run(javaCommand(), pingJar, host, latencyIdlePort, port, latencyRounds,
                        latencyIterations, clientOptions());
            }
            int stillOpen = established.get() - closedByServe.get();
            System.out.printf("%d of %d connections still open after the ping%n", stillOpen, established.get());
            if (probes != null) { // the idle probe began before the held ones: it closes while they are all open
                withinThresholds &= probes.await();
            }
            closing = true;
            for (Channel ch : held) {
                ch.close();
            }
            Thread.sleep(TimeUnit.SECONDS.toMillis(holdSec));
            System.out.println("closed:  " + describe(serve.read()));
            return pinged && stillOpen == connections && withinThresholds ? 0 : 1;
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private void connectAll(EventLoopGroup group, boolean epoll) throws Exception {
        MpaSettings settings = MpaSettings.builder().crc(crc).ird(1).ord(1).peerToPeer(false).build();
        boolean ift = wire.equals("ift");
        TlsSettings tls = tlsPin != null ? TlsSettings.builder().pin(tlsPin)
                .handshakeTimeoutMillis(tlsHandshakeTimeoutMs).build() : null;
        InetSocketAddress server = new InetSocketAddress(InetAddress.getByName(host), port);
        Semaphore slots = new Semaphore(inFlight);
        CountDownLatch done = new CountDownLatch(connections);
        Bootstrap b = new Bootstrap().group(group)
                .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        Outcome outcome = new Outcome(slots, done);
                        if (ift) {
                            ch.pipeline().addLast(IftAdaptionHandler.nodeA(IftSettings.defaults()), outcome);
                        } else if (tls != null) {
                            TlsLayer.addClient(ch.pipeline(), tls, server, p -> p.addBefore(OUTCOME, null,
                                    MpaStartupHandler.initiator(settings))).addListener(f -> {
                                        if (!f.isSuccess()) {
                                            outcome.ended(ch, false, false, "TLS: " + f.cause(), null);
                                        }
                                    });
                            ch.pipeline().addLast(OUTCOME, outcome);
                        } else {
                            ch.pipeline().addLast(MpaStartupHandler.initiator(settings), outcome);
                        }
                    }
                });
        boolean spread = perSource > 0 && server.getAddress().isLoopbackAddress()
                && server.getAddress().getAddress().length == 4;
        for (int i = 0; i < connections; i++) {
            slots.acquire();
            InetSocketAddress local = spread ? new InetSocketAddress(source(i, (connections + perSource - 1)
                    / perSource, firstPrefix), 0) : null;
            b.connect(server, local).addListener(f -> {
                if (!f.isSuccess()) {
                    failure("connect: " + f.cause());
                    slots.release();
                    done.countDown();
                }
            });
        }
        if (!done.await(openTimeoutSec, TimeUnit.SECONDS)) {
            System.out.println("not every startup finished in " + openTimeoutSec + " s: " + done.getCount()
                    + " pending");
        }
    }

    /** Counts how one connection's MPA startup ended, then holds it. */
    private final class Outcome extends ChannelInboundHandlerAdapter {
        private final Semaphore slots;
        private final CountDownLatch done;
        private boolean counted;

        Outcome(Semaphore slots, CountDownLatch done) {
            this.slots = slots;
            this.done = done;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof MpaStartupCompletionEvent e) {
                ended(ctx.channel(), e.isSuccess(), e.isRejected(), "MPA startup: " + e.cause(),
                        e.isSuccess() ? e.parameters().peerPrivateData() : null);
            } else if (evt instanceof IftAdaptionCompletionEvent e) {
                ended(ctx.channel(), e.isSuccess(), false, "IFT adaption: " + e.cause(), null);
            } else {
                ctx.fireUserEventTriggered(evt);
            }
        }

        /** The startup's end: {@code pd} is the MPA Reply's Private Data (null: IFT, which has none). */
        void ended(Channel ch, boolean success, boolean isRejected, String cause, byte[] pd) {
            if (counted) {
                return;
            }
            counted = true;
            if (success) {
                if (pd == null) {
                    advertisement.compareAndSet(null, "IFT: none");
                } else if (pd.length < 16) {
                    noAdvertisement.incrementAndGet();
                } else {
                    advertisement.compareAndSet(null, String.format("e.g. STag 0x%08x size %d",
                            (pd[8] & 0xFF) << 24 | (pd[9] & 0xFF) << 16 | (pd[10] & 0xFF) << 8 | pd[11] & 0xFF,
                            (pd[12] & 0xFFL) << 24 | (pd[13] & 0xFF) << 16 | (pd[14] & 0xFF) << 8 | pd[15] & 0xFF));
                }
                established.incrementAndGet();
                held.add(ch);
                ch.closeFuture().addListener(f -> {
                    if (!closing) {
                        closedByServe.incrementAndGet();
                    }
                });
            } else if (isRejected) {
                rejected.incrementAndGet();
                ch.close();
            } else {
                failure(cause);
                ch.close();
            }
            slots.release();
            done.countDown();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // the startup handler reports startup failures as the event above
        }
    }

    /**
     * Connection {@code i}'s source: prefix {@code i mod prefixes} (127.0.1.1, 127.0.2.1, ..., 127.1.0.1, ...), so the
     * startups in progress at any time are spread over every prefix. 127.0.0.0/24 is left to ping.
     */
    static String source(int i, int prefixes) {
        return source(i, prefixes, 1);
    }

    /** As {@link #source(int, int)}, the first prefix being 127.0.0.0/24 + {@code first} /24s. */
    static String source(int i, int prefixes, int first) {
        int k = first + i % prefixes;
        return "127." + (k / 256) + "." + (k % 256) + ".1";
    }

    private void failure(String what) {
        failed.incrementAndGet();
        firstFailure.compareAndSet(null, what);
    }

    private static String javaCommand() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    /** ping's and bench's options for the wire held: IFT, or TLS pinned to serve's certificate. */
    private List<String> clientOptions() {
        return wire.equals("ift") ? List.of("--wire", "ift")
                : tlsPin != null ? List.of("--tls", "--pin", tlsPin) : List.of();
    }

    private static String describe(ProcessMemory.Reading r) {
        return String.format("VmRSS %s", mib(r.rssBytes())) + (r.heapBytes() < 0 ? ""
                : String.format(", heap after GC %s, JDK direct buffers %s", mib(r.heapBytes()), mib(r.directBytes())));
    }

    private static String perConnection(ProcessMemory.Reading before, ProcessMemory.Reading after, int open) {
        if (open <= 0) {
            return "per connection: no connection open";
        }
        String s = String.format("per connection (%d held): VmRSS +%.1f KiB", open,
                (after.rssBytes() - before.rssBytes()) / 1024.0 / open);
        if (before.heapBytes() >= 0) {
            s += String.format(", heap +%.1f KiB, direct +%.1f KiB",
                    (after.heapBytes() - before.heapBytes()) / 1024.0 / open,
                    (after.directBytes() - before.directBytes()) / 1024.0 / open);
        }
        return s;
    }

    private static String mib(long bytes) {
        return String.format("%.1f MiB", bytes / 1048576.0);
    }

    private static String openFilesLimit() {
        try {
            List<String> limits = Files.readAllLines(Path.of("/proc/self/limits"));
            for (String l : limits) {
                if (l.startsWith("Max open files")) {
                    return l.replaceAll("Max open files\\s+", "").replaceAll("\\s+", " ").trim();
                }
            }
        } catch (Exception e) {
            // not Linux
        }
        return "unknown";
    }
}
