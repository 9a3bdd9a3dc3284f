package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.SctpWire;

/** DDP/RDMAP over SCTP (draft-stewart-otis-sctp-ddp-rdma-00): the JDK's SCTP channels, NIO. */
final class SctpToolWire extends ToolWire {
    SctpToolWire(WireOptions options) {
        super(options);
    }

    @Override
    String name() {
        return "sctp";
    }

    @Override
    int defaultPort() {
        return SctpWire.DEFAULT_PORT;
    }

    @Override
    boolean usesStackTransport() {
        return false;
    }

    @Override
    void checkServe(ServerMpaOptions mpa, boolean pcap, boolean trace) {
        if (mpa.markers() || pcap || trace) {
            throw new IllegalArgumentException("--markers, --pcap and --trace are MPA options, not for --wire sctp");
        }
    }

    @Override
    void checkBench(boolean crc) {
        options.sctp.framing(true); // no SCTP on this machine: one line, exit 2 (not a failed run)
    }

    @Override
    ClientWire clientWire(IwarpStack stack, int threads) {
        options.ift.refuseUnlessIft(false);
        return SctpWire.client(stack, options.sctp.framing(true));
    }

    @Override
    RpingServer startServer(ServerConfig config, IwarpStack.Builder stack, TlsSettings tls, ServerSide side)
            throws Exception {
        return RpingServer.start(config, ServeOptions.on(SctpWire.server(stack.build(),
                options.sctp.framing(false).irdOrd(config.ird(), config.ord()), true)));
    }

    @Override
    String describe(RpingServer server) {
        return "SCTP, nio";
    }
}
