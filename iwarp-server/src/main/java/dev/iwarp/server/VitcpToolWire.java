package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.VitcpWire;

/** VI/TCP (draft-dicecco-vitcp-01): its own provider and NIO threads, no stack. */
final class VitcpToolWire extends ToolWire {
    VitcpToolWire(WireOptions options) {
        super(options);
    }

    @Override
    String name() {
        return "vitcp";
    }

    @Override
    int defaultPort() {
        return ServerConfig.DEFAULT_VITCP_PORT;
    }

    @Override
    boolean usesStackTransport() {
        return false;
    }

    @Override
    boolean usesStack() {
        return false;
    }

    @Override
    void checkServe(ServerMpaOptions mpa, boolean pcap, boolean trace) {
        if (mpa.markers() || pcap || trace) {
            throw new IllegalArgumentException("--markers, --pcap and --trace are iWARP options, not for --wire vitcp");
        }
    }

    @Override
    ClientWire clientWire(IwarpStack stack, int threads) {
        options.ift.refuseUnlessIft(false);
        return VitcpWire.client(options.vitcpConfig(false, 1).build(), options.discriminatorOctets(), threads);
    }

    @Override
    ClientWire clientWire(IwarpStack stack, ClientMpaOptions mpa) {
        options.ift.refuseUnlessIft(false);
        return mpa.checkVitcp(clientWire(null, 1));
    }

    @Override
    RpingServer startServer(ServerConfig config, IwarpStack.Builder stack, TlsSettings tls, ServerSide side)
            throws Exception {
        // the CRC option is always offered: the client decides (draft-dicecco-vitcp-01 §3.6) unless required
        var vi = options.vitcpConfig(true, side.readWindow());
        if (side.incomingTimeoutMs() > 0) {
            vi.incomingTimeout(java.time.Duration.ofMillis(side.incomingTimeoutMs()));
        }
        return RpingServer.start(config, ServeOptions.on(VitcpWire.server(vi.build(),
                options.discriminatorOctets(), side.requireCrc(), side.threads(), side.ioHandlers())));
    }

    @Override
    String describe(RpingServer server) {
        return "VI/TCP, nio";
    }
}
