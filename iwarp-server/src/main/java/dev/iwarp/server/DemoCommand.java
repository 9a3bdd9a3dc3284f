package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code demo}: {@code serve} on 127.0.0.1 (ephemeral port) and {@code ping -C 10 -v -V} against it, in one JVM, over
 * iWARP, ({@code --wire vitcp}) VI/TCP or ({@code --wire ift}) DDP/RDMAP over IFT.
 */
@Command(name = "demo",
        description = "Start serve on 127.0.0.1 (ephemeral port), run ping -C 10 -v -V against it, print what happened.")
final class DemoCommand implements Callable<Integer> {
    static final int PINGS = 10;
    static final int SIZE = 64;

    @Spec
    CommandSpec spec;

    @Mixin
    HelpOption help;

    @Mixin
    WireOptions wire = new WireOptions();

    @Mixin
    TlsOptions tls = new TlsOptions();

    @Option(names = "--pcap", paramLabel = "FILE",
            description = "Write the server's TCP traffic (both directions) to this pcap file, as serve --pcap does (iWARP and IFT).")
    Path pcap;

    @SuppressWarnings("try") // the capture is closed last, after the server
    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        wire.check();
        ServerConfig config = ServerConfig.defaults().withAddress("127.0.0.1", 0);
        ToolWire tool = wire.tool();
        if (pcap != null && !tool.capturable()) {
            throw new IllegalArgumentException("--pcap captures the iWARP wire only");
        }
        dev.iwarp.bootstrap.tls.TlsSettings[] tlsPair = tls.demoPair(!tool.carriesTls());
        PcapFile capture = pcap == null ? null : PcapFile.create(CommandLineChecks.outputFile("--pcap", pcap));
        IwarpStack.Builder serverStack = IwarpStack.builder().threads(1);
        if (capture != null && tlsPair != null) {
            serverStack.framingHook(capture::installAboveTls); // the decrypted MPA stream
        } else if (capture != null) {
            serverStack.channelHook(capture::install);
        }
        boolean result;
        try (PcapFile closedLast = capture;
             RpingServer server = tool.startServer(config, serverStack, tlsPair == null ? null : tlsPair[0],
                     ToolWire.ServerSide.DEMO);
             IwarpStack clientStack = tool.stack(IwarpStack.builder().threads(1));
             ClientWire client = tool.clientWire(clientStack, 1, tlsPair == null ? null : tlsPair[1])) {
            out.printf("demo: serve listening on %s (%s%s), ping -C %d -S %d -v -V%n", dev.iwarp.server.wire.Addresses.format(server.localAddress()),
                    tool.describe(server),
                    tlsPair == null ? "" : ", TLS 1.3", PINGS, SIZE);
            boolean ok = PingCommand.run(client, server.localAddress(), PINGS, SIZE, true, false, 10_000, out);
            RpingSession s = server.lastSession();
            s.awaitCounts(PINGS, PINGS, 2L * PINGS, 2_000); // the last Send's completion may trail its delivery
            out.printf("server: %d RDMA Reads (%d octets), %d RDMA Writes (%d octets), %d Sends%n",
                    s.reads(), s.bytesRead(), s.writes(), s.bytesWritten(), s.sends());
            boolean counts = s.reads() == PINGS && s.writes() == PINGS && s.sends() == 2L * PINGS;
            result = ok && counts;
        }
        if (pcap != null) { // closed now: all of it is in the file
            out.printf("demo: wrote the server's traffic to %s (%d octets)%n", pcap.toAbsolutePath(),
                    java.nio.file.Files.size(pcap));
        }
        out.println(result ? "demo: OK" : "demo: FAILED");
        return result ? 0 : 1;
    }
}
