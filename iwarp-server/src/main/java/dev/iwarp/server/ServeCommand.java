package dev.iwarp.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaIrdOrd;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code serve}: the rping echo/target server until SIGTERM/SIGINT, over iWARP or VI/TCP. */
@Command(name = "serve",
        description = "Listen as MPA Responder (or VI/TCP passive end, --wire vitcp; IFT node B, --wire ift; SCTP, --wire sctp) and serve every connection as an rping echo/target session.",
        footer = {"", "Each connection has its own protection domain and target region",
                "(unless --shared-target).",
                "Logs: connection events beyond 200 per 10 s and refusals beyond one",
                "per cause per 10 s are counted in one line; at most 5 warnings per",
                "source prefix and 100 in all per 10 s about what peers sent."})
final class ServeCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

    @Mixin
    HelpOption help;

    @Option(names = "--address", description = "Address to bind (default: ${DEFAULT-VALUE}).")
    String address = "0.0.0.0";

    @Mixin
    WireOptions wire = new WireOptions();

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Option(names = "--port", description = "TCP port, 0..65535; 0 picks a free one (default: 7174, --wire vitcp 7175, --wire ift 7176); SCTP port with --wire sctp (default 7177).")
    @Range(max = HostPort.MAX_PORT)
    Integer port;

    @Option(names = "--crc", description = "Force MPA CRC (Reply C=1); by default the client's C bit decides. "
            + "VI/TCP: ConnectReject requests without the CRC option (by default the client decides).")
    boolean crc;

    @Option(names = "--read-window", description = "VI/TCP RDMA Read Window proposed; agreed as the lesser (default: ${DEFAULT-VALUE}).")
    @Range(max = 65535)
    int readWindow = 16;

    @Option(names = "--markers", description = "Ask clients for MPA markers (siw refuses them).")
    boolean markers;

    @Option(names = "--mpa-rev", description = "Highest MPA revision accepted, 1 or 2 (default: ${DEFAULT-VALUE}).")
    @Range(min = 1, max = 2)
    int mpaRev = 2;

    @Option(names = "--ird", description = "IRD offered, 0..16383 (default: ${DEFAULT-VALUE}).")
    @Range(max = MpaIrdOrd.MAX_VALUE)
    int ird = 16;

    @Option(names = "--ord", description = "ORD offered, 0..16383 (default: ${DEFAULT-VALUE}).")
    @Range(max = MpaIrdOrd.MAX_VALUE)
    int ord = 16;

    @Option(names = "--p2p", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Accept RFC 6581 peer-to-peer (default: on; --no-p2p refuses it).")
    boolean p2p;

    @Option(names = "--max-connections", description = "Connections served at once; more get an MPA reject (default: "
            + "as many as 15/16 of --memory-budget gives their 2 x 64 KiB session buffers; what a session "
            + "commits beyond them is drawn from the budget and refused when it runs short; serve logs the "
            + "figures at start).")
    @Range
    Integer maxConnections;

    @Option(names = "--memory-budget", paramLabel = "SIZE", description = "Memory serve commits on peers' behalf at "
            + "most (targets, session and bench receive buffers), e.g. 512m or 4g; a peer whose message needs more "
            + "gets a Terminate, the others go on, and 1/16 is kept for new sessions (default: 3/4 of the JVM's "
            + "direct-memory limit, its maximum heap size unless set).")
    String memoryBudget;
    /** The budget made from --memory-budget when serve starts. */
    private dev.iwarp.verbs.MemoryBudget budget;

    @Option(names = "--read-rate", paramLabel = "BYTES_PER_SECOND", description = "RDMA Read Response octets per "
            + "second each connection sends at most (iWARP); 0 = no limit (default: ${DEFAULT-VALUE}, 1 GiB/s).")
    @Range
    long readRate = ServerMemory.DEFAULT_READ_RATE;

    @Option(names = "--startup-timeout", paramLabel = "MS", description = "MPA startup (IFT adaption) timeout in ms; with --tls the TLS handshake before it "
            + "has as long (default: ${DEFAULT-VALUE}).")
    @Range(min = 1)
    long startupTimeoutMs = 10_000;

    @Option(names = "--idle-timeout", paramLabel = "SECONDS", description = "Close sessions that move no data this long: "
            + "only messages with payload (or RDMA Read Requests) count, not zero-length ones nor octets of an "
            + "unfinished one; 0 = never (default: ${DEFAULT-VALUE}).")
    @Range
    long idleTimeoutSec = ServerConfig.DEFAULT_IDLE_TIMEOUT_SEC;

    @Option(names = "--max-startups", description = "Connections still in startup (no MPA Request or VI/TCP "
            + "ConnectRequest answered yet); more are closed at once; 0 = no limit (default: ${DEFAULT-VALUE}).")
    @Range
    int maxStartups = ServerLimits.DEFAULT_MAX_STARTUPS;

    @Option(names = "--max-per-source", description = "Connections from one source prefix (see --source-prefix-v4 and --source-prefix-v6), in "
            + "startup or served; "
            + "more are closed at once; 0 = no limit (default: ${DEFAULT-VALUE}).")
    @Range
    int maxPerSource = ServerLimits.DEFAULT_MAX_PER_SOURCE;

    @Option(names = "--message-deadline", paramLabel = "MS", description = "Once the first octet of an FPDU or VI/TCP "
            + "segment arrived, the rest must arrive within this time, else the connection is closed; 0 = none "
            + "(default: ${DEFAULT-VALUE}).")
    @Range
    long messageDeadlineMs = ServerLimits.DEFAULT_MESSAGE_DEADLINE_MS;

    @Option(names = "--max-read-size", paramLabel = "OCTETS", description = "Largest RDMA Read served per request "
            + "(iWARP); a larger one is answered with a Terminate; 0 = no limit (default: ${DEFAULT-VALUE}).")
    @Range
    int maxReadSize = ServerLimits.DEFAULT_MAX_READ_SIZE;

    @Option(names = "--source-prefix-v4", paramLabel = "BITS", description = "Per-source limits count IPv4 "
            + "addresses by this prefix, 1..32 (default: ${DEFAULT-VALUE}: one /24 is one source).")
    @Range(min = 1, max = 32)
    int sourcePrefixV4 = ServerLimits.DEFAULT_SOURCE_PREFIX_V4;

    @Option(names = "--source-prefix-v6", paramLabel = "BITS", description = "Per-source limits count IPv6 "
            + "addresses by this prefix, 1..128 (default: ${DEFAULT-VALUE}: one /64 is one source).")
    @Range(min = 1, max = 128)
    int sourcePrefixV6 = ServerLimits.DEFAULT_SOURCE_PREFIX_V6;

    @Option(names = "--max-startups-per-source", description = "Connections from one source prefix still in "
            + "startup; more are closed at once; 0 = no limit (default: ${DEFAULT-VALUE}).")
    @Range
    int maxStartupsPerSource = ServerLimits.DEFAULT_MAX_STARTUPS_PER_SOURCE;

    @Option(names = "--first-octet-timeout", paramLabel = "MS", description = "Close a connection that sends "
            + "nothing this long after TCP accepted it; 0 = never (default: ${DEFAULT-VALUE}).")
    @Range
    long firstOctetTimeoutMs = ServerLimits.DEFAULT_FIRST_OCTET_TIMEOUT_MS;

    @Option(names = "--drain-timeout", paramLabel = "SECONDS", description = "Close a connection whose peer reads "
            + "nothing of what we send (output stays unwritable) this long; 0 = never (default: ${DEFAULT-VALUE}).")
    @Range
    long drainTimeoutSec = ServerLimits.DEFAULT_DRAIN_TIMEOUT_SEC;

    @Option(names = "--allow-markers", description = "Serve MPA Requests that ask for markers (M=1): every FPDU sent "
            + "to that client is then marked, at several times the CPU. By default they get a Reply R=1, as siw "
            + "gives them.")
    boolean allowMarkers;

    @Option(names = "--tls-handshake-rate", paramLabel = "N", description = "TLS handshakes begun per second per "
            + "source prefix; more connections are closed at once; 0 = no limit (default: ${DEFAULT-VALUE}).")
    @Range
    int tlsHandshakeRate = ServerLimits.DEFAULT_TLS_HANDSHAKES_PER_SEC;

    @Option(names = "--target-size", paramLabel = "OCTETS",
            description = "Target region advertised in the MPA Reply Private Data (VI/TCP: ConnectAccept), each "
                    + "connection's own; 0 = none (default: ${DEFAULT-VALUE}).")
    @Range
    int targetSize = 1 << 20;

    @Option(names = "--shared-target", description = "One target region for all connections instead of one each. "
            + "Exposes every client's data to every other client: any client may read and overwrite it, and all "
            + "connections share one protection domain.")
    boolean sharedTarget;

    @Option(names = "--pcap", paramLabel = "FILE",
            description = "Write every connection's TCP traffic to this pcap file (Netty's PcapWriteHandler).")
    java.nio.file.Path pcap;

    @Option(names = "--trace", description = "Log every FPDU (IFT: frame) sent and received (the framer at TRACE).")
    boolean trace;

    @Option(names = "--echo", description = "Echo every Send, 16-octet ones too, instead of reading those as rping "
            + "advertisements: for Send/Recv tools such as librdmacm's rdma_client.")
    boolean echoOnly;

    @Mixin
    LogOptions log = new LogOptions();

    @Mixin
    MetricsOptions metrics = new MetricsOptions();

    @Mixin
    TransportOption transport = new TransportOption();

    @Override
    public Integer call() throws Exception {
        log.apply();
        wire.check();
        transport.check(wire);
        ToolWire tool = wire.tool();
        ServerMpaOptions mpa = new ServerMpaOptions(crc, markers, mpaRev, p2p);
        tool.checkServe(mpa, pcap != null, trace);
        try {
            java.net.InetAddress.getByName(address);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("--address: unknown host '" + address + "'");
        }
        long budgetOctets = memoryBudget != null ? ServerMemory.parseSize("--memory-budget", memoryBudget)
                : ServerMemory.defaultBudget(ServerMemory.maxDirectMemory());
        dev.iwarp.verbs.MemoryBudget budget = ServerMemory.budget(budgetOctets);
        this.budget = budget;
        metrics.budget(budget);
        int connections = maxConnections != null ? maxConnections
                : ServerMemory.defaultMaxConnections(budgetOctets);
        LOG.info("memory budget {}{}; {} connections at most{} (each can make serve commit {})",
                ServerMemory.human(budgetOctets), memoryBudget != null ? "" : " (3/4 of the "
                        + ServerMemory.human(ServerMemory.maxDirectMemory()) + " direct-memory limit)", connections,
                maxConnections != null ? "" : " (15/16 of the budget / 128 KiB of session buffers)",
                ServerMemory.human(ServerMemory.perConnection(targetSize, sharedTarget)));
        ServerConfig config = new ServerConfig(address, port != null ? port : wire.defaultPort(), ird, ord,
                connections, startupTimeoutMs, idleTimeoutSec, targetSize, echoOnly, sharedTarget,
                new ServerLimits(maxStartups, maxPerSource, messageDeadlineMs, maxReadSize, sourcePrefixV4,
                        sourcePrefixV6, maxStartupsPerSource, firstOctetTimeoutMs, drainTimeoutSec, allowMarkers,
                        tlsHandshakeRate));
        PeerWarningLimiter.usePrefixes(sourcePrefixV4, sourcePrefixV6); // warnings are limited per source too
        dev.iwarp.bootstrap.tls.TlsSettings tlsSettings = tls.server(!tool.carriesTls(), startupTimeoutMs);
        if (trace) {
            ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(tool.traceLogger()))
                    .setLevel(ch.qos.logback.classic.Level.TRACE);
        }
        PcapFile capture = pcap == null ? null : PcapFile.create(CommandLineChecks.outputFile("--pcap", pcap));
        warnIfExposed();
        IwarpStack.Builder stack = metrics.observe((tool.usesStackTransport() ? transport.apply(IwarpStack.builder())
                : IwarpStack.builder()).memoryBudget(budget).readResponseRate(readRate));
        if (capture != null && tlsSettings != null) {
            stack.framingHook(capture::installAboveTls);
            LOG.info("capturing to {}: the DECRYPTED MPA stream inside TLS, not the TLS records", pcap);
        } else if (capture != null) {
            stack.channelHook(capture::install);
            LOG.info("capturing to {}", pcap);
        }
        try {
            // the CRC option is always offered to a VI/TCP client: it decides, unless --crc requires it
            ToolWire.ServerSide side = new ToolWire.ServerSide(mpa, readWindow, startupTimeoutMs, crc, 2,
                    metrics.ioHandlers());
            return serveUntilSignal(start(config, () -> tool.startServer(config, stack, tlsSettings, side)), capture);
        } catch (Exception e) {
            if (capture != null) {
                capture.close();
            }
            throw e;
        }
    }

    private void warnIfExposed() {
        String exposure = exposureWarning(address, tls.authenticatesClients());
        if (exposure != null) {
            LOG.warn(exposure);
        }
    }

    /**
     * The warning serve logs first when it can be reached from other hosts and admits anyone (no client
     * certificate, pin or PSK), or null when it listens on loopback only or authenticates its clients.
     */
    static String exposureWarning(String address, boolean authenticatesClients) {
        java.net.InetAddress a;
        try {
            a = java.net.InetAddress.getByName(address);
        } catch (java.net.UnknownHostException e) {
            return null;
        }
        if (a.isLoopbackAddress() || authenticatesClients) {
            return null;
        }
        String where = a.isAnyLocalAddress() ? "all interfaces" : address;
        return "listening on " + where + " without authentication: any host that reaches this port can connect "
                + "and read and write its target region (--address 127.0.0.1 keeps it local; --tls with --trust, "
                + "--pin or --psk-file admits only known clients)";
    }

    /** Starts the server; a taken port becomes an error that names it. */
    private static RpingServer start(ServerConfig config, Callable<RpingServer> start) throws Exception {
        try {
            return start.call();
        } catch (Exception e) {
            if (CommandLineChecks.isAddressInUse(e)) {
                throw new java.io.IOException("port " + config.port() + " is already in use on " + config.address()
                        + " (another server running? choose one with --port)", e);
            }
            throw e;
        }
    }

    private int serveUntilSignal(RpingServer server, PcapFile capture) throws InterruptedException {
        try {
            metrics.started(server);
        } catch (Throwable e) { // also a taken metrics port, which Netty throws undeclared
            server.close();
            throw e;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        // budget refusals as one line per window with their counts, never one per refusal
        BudgetRefusalLog refusals = BudgetRefusalLog.start(budget, AggregatedLog.DEFAULT_WINDOW_SEC);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("shutting down: closing {} session(s)", server.sessions().size());
            server.close();
            refusals.close();
            if (capture != null) {
                capture.close();
            }
            metrics.close();
            LOG.info("stopped after {} connection(s), {} refused", server.accepted(), server.refused());
            stopped.countDown();
        }, "iwarp-server-shutdown"));
        stopped.await();
        return 0;
    }
}
