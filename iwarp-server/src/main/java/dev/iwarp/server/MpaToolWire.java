package dev.iwarp.server;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;

/** iWARP: MPA/DDP/RDMAP over TCP (RFC 5044, 5041, 5040). */
final class MpaToolWire extends ToolWire {
    MpaToolWire(WireOptions options) {
        super(options);
    }

    @Override
    String name() {
        return "iwarp";
    }

    @Override
    int defaultPort() {
        return ServerConfig.DEFAULT_PORT;
    }

    @Override
    boolean carriesTls() {
        return true;
    }

    @Override
    boolean capturable() {
        return true;
    }

    @Override
    void checkServe(ServerMpaOptions mpa, boolean pcap, boolean trace) {
    }

    @Override
    Framing probeFraming(ClientMpaOptions mpa, boolean markersCase, long timeoutMs) {
        if (markersCase) {
            mpa.markers = true;
        }
        return MpaFraming.of(mpa.settings(1, 1));
    }

    @Override
    Class<?> traceLogger() {
        return dev.iwarp.mpa.MpaFramer.class;
    }

    @Override
    ClientWire clientWire(IwarpStack stack, int threads) {
        options.ift.refuseUnlessIft(false);
        return IwarpWire.client(stack);
    }

    @Override
    ClientWire clientWire(IwarpStack stack, ClientMpaOptions mpa) {
        return clientWire(stack, mpa, null);
    }

    @Override
    ClientWire clientWire(IwarpStack stack, int threads, TlsSettings tls) {
        options.ift.refuseUnlessIft(false);
        return IwarpWire.client(stack, null, tls);
    }

    @Override
    ClientWire clientWire(IwarpStack stack, ClientMpaOptions mpa, TlsSettings tls) {
        options.ift.refuseUnlessIft(false);
        return IwarpWire.client(stack, mpa.settings(1, 1), tls);
    }

    @Override
    RpingServer startServer(ServerConfig config, IwarpStack.Builder stack, TlsSettings tls, ServerSide side)
            throws Exception {
        return RpingServer.start(config, ServeOptions.on(stack.build()).mpa(side.mpa()).tls(tls));
    }

    @Override
    String describe(RpingServer server) {
        return transportName(server);
    }
}
