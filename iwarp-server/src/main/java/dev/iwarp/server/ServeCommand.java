package dev.iwarp.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ServerWire;
import dev.iwarp.server.wire.VitcpWire;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code serve}: the rping echo/target server until SIGTERM/SIGINT, over iWARP or VI/TCP. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Listen as MPA Responder (or VI/TCP passive end, --wire vitcp) and serve every connection as an rping echo/target session.",
        footer = {"", "Each connection has its own protection domain and target region",
                "(unless --shared-target).",
                "Logs: one line per connection event; refusals aggregated per cause",
                "per 10 s; at most 5 warnings per peer address per 10 s about what",
                "that peer sent, the rest counted in one line."})
final class ServeCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

    @Option(names = "--address", description = "Address to bind (default: ${DEFAULT-VALUE}).")
    String address = "0.0.0.0";

    @Mixin
    WireOptions wire = new WireOptions();

    @Option(names = "--port", description = "TCP port (default: 7174, with --wire vitcp 7175).")
    Integer port;

    @Option(names = "--crc", description = "Force MPA CRC (Reply C=1); by default the client's C bit decides. "
            + "VI/TCP: ConnectReject requests without the CRC option (by default the client decides).")
    boolean crc;

    @Option(names = "--read-window", description = "VI/TCP RDMA Read Window proposed; agreed as the lesser (default: ${DEFAULT-VALUE}).")
    int readWindow = 16;

    @Option(names = "--markers", description = "Ask clients for MPA markers (siw refuses them).")
    boolean markers;

    @Option(names = "--mpa-rev", description = "Highest MPA revision accepted, 1 or 2 (default: ${DEFAULT-VALUE}).")
    int mpaRev = 2;

    @Option(names = "--ird", description = "IRD offered (default: ${DEFAULT-VALUE}).")
    int ird = 16;

    @Option(names = "--ord", description = "ORD offered (default: ${DEFAULT-VALUE}).")
    int ord = 16;

    @Option(names = "--p2p", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Accept RFC 6581 peer-to-peer (default: on; --no-p2p refuses it).")
    boolean p2p;

    @Option(names = "--max-connections", description = "Connections served at once; more get an MPA reject (default: ${DEFAULT-VALUE}).")
    int maxConnections = 1024;

    @Option(names = "--startup-timeout", paramLabel = "MS", description = "MPA startup timeout in ms (default: ${DEFAULT-VALUE}).")
    long startupTimeoutMs = 10_000;

    @Option(names = "--idle-timeout", paramLabel = "SECONDS", description = "Close sessions that complete no message "
            + "(FPDU, VI/TCP segment) this long; octets of an unfinished one do not count; 0 = never (default: "
            + "${DEFAULT-VALUE}).")
    long idleTimeoutSec = ServerConfig.DEFAULT_IDLE_TIMEOUT_SEC;

    @Option(names = "--max-startups", description = "Connections still in startup (no MPA Request or VI/TCP "
            + "ConnectRequest answered yet); more are closed at once; 0 = no limit (default: ${DEFAULT-VALUE}).")
    int maxStartups = ServerLimits.DEFAULT_MAX_STARTUPS;

    @Option(names = "--max-per-source", description = "Connections from one source IP address, in startup or served; "
            + "more are closed at once; 0 = no limit (default: ${DEFAULT-VALUE}).")
    int maxPerSource = ServerLimits.DEFAULT_MAX_PER_SOURCE;

    @Option(names = "--message-deadline", paramLabel = "MS", description = "Once the first octet of an FPDU or VI/TCP "
            + "segment arrived, the rest must arrive within this time, else the connection is closed; 0 = none "
            + "(default: ${DEFAULT-VALUE}).")
    long messageDeadlineMs = ServerLimits.DEFAULT_MESSAGE_DEADLINE_MS;

    @Option(names = "--max-read-size", paramLabel = "OCTETS", description = "Largest RDMA Read served per request "
            + "(iWARP); a larger one is answered with a Terminate; 0 = no limit (default: ${DEFAULT-VALUE}).")
    int maxReadSize = ServerLimits.DEFAULT_MAX_READ_SIZE;

    @Option(names = "--target-size", paramLabel = "OCTETS",
            description = "Target region advertised in the MPA Reply Private Data (VI/TCP: ConnectAccept), each "
                    + "connection's own; 0 = none (default: ${DEFAULT-VALUE}).")
    int targetSize = 1 << 20;

    @Option(names = "--shared-target", description = "One target region for all connections instead of one each. "
            + "Exposes every client's data to every other client: any client may read and overwrite it, and all "
            + "connections share one protection domain.")
    boolean sharedTarget;

    @Option(names = "--pcap", paramLabel = "FILE",
            description = "Write every connection's TCP traffic to this pcap file (Netty's PcapWriteHandler).")
    java.nio.file.Path pcap;

    @Option(names = "--trace", description = "Log every FPDU sent and received (MPA framer at TRACE).")
    boolean trace;

    @Option(names = "--echo", description = "Echo every Send, 16-octet ones too, instead of reading those as rping "
            + "advertisements: for Send/Recv tools such as librdmacm's rdma_client.")
    boolean echoOnly;

    @Override
    public Integer call() throws Exception {
        if (mpaRev != 1 && mpaRev != 2) {
            throw new IllegalArgumentException("--mpa-rev must be 1 or 2: " + mpaRev);
        }
        if (targetSize < 0 || maxConnections < 0 || startupTimeoutMs <= 0 || idleTimeoutSec < 0 || maxStartups < 0
                || maxPerSource < 0 || messageDeadlineMs < 0 || maxReadSize < 0) {
            throw new IllegalArgumentException("--target-size, --max-connections, --idle-timeout, --max-startups, "
                    + "--max-per-source, --message-deadline and --max-read-size must be >= 0, --startup-timeout > 0");
        }
        ServerConfig config = new ServerConfig(address, port != null ? port : wire.defaultPort(), crc, markers, mpaRev,
                ird, ord, p2p, maxConnections, startupTimeoutMs, idleTimeoutSec, targetSize, echoOnly, sharedTarget,
                new ServerLimits(maxStartups, maxPerSource, messageDeadlineMs, maxReadSize));
        if (wire.vitcp()) {
            if (markers || pcap != null || trace) {
                throw new IllegalArgumentException("--markers, --pcap and --trace are iWARP options, not for --wire vitcp");
            }
            // the CRC option is always offered: the client decides (§3.6), unless --crc requires it
            ServerWire vi = VitcpWire.server(wire.vitcpConfig(true, readWindow)
                    .incomingTimeout(java.time.Duration.ofMillis(startupTimeoutMs)).build(),
                    wire.discriminatorOctets(), crc, 2);
            return serveUntilSignal(RpingServer.start(config, vi), null);
        }
        if (trace) {
            ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(dev.iwarp.mpa.MpaFramer.class))
                    .setLevel(ch.qos.logback.classic.Level.TRACE);
        }
        PcapFile capture = pcap == null ? null : PcapFile.create(pcap);
        IwarpStack.Builder stack = IwarpStack.builder();
        if (capture != null) {
            stack.channelHook(capture::install);
            LOG.info("capturing to {}", pcap);
        }
        return serveUntilSignal(RpingServer.start(config, stack.build(), true), capture);
    }

    private static int serveUntilSignal(RpingServer server, PcapFile capture) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("shutting down: closing {} session(s)", server.sessions().size());
            server.close();
            if (capture != null) {
                capture.close();
            }
            LOG.info("stopped after {} connection(s), {} refused", server.accepted(), server.refused());
            stopped.countDown();
        }, "iwarp-server-shutdown"));
        stopped.await();
        return 0;
    }
}
