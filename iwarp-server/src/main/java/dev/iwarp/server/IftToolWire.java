package dev.iwarp.server;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;

/** DDP/RDMAP over IFT (draft-williams-iwarp-ift-01). */
final class IftToolWire extends ToolWire {
    IftToolWire(WireOptions options) {
        super(options);
    }

    @Override
    String name() {
        return "ift";
    }

    @Override
    int defaultPort() {
        return ServerConfig.DEFAULT_IFT_PORT;
    }

    @Override
    boolean capturable() {
        return true;
    }

    @Override
    void check() {
        options.ift.settings(10_000);
    }

    @Override
    void checkServe(ServerMpaOptions mpa, boolean pcap, boolean trace) {
        if (!mpa.equals(ServerMpaOptions.defaults())) {
            throw new IllegalArgumentException("--crc, --markers, --mpa-rev and --no-p2p are MPA options, not for "
                    + "--wire ift (its CRCs: --ift-send-crc, --ift-check-crc, --ift-require-crc)");
        }
    }

    @Override
    void checkBench(boolean crc) {
        if (crc) {
            throw new IllegalArgumentException("--crc is for MPA and VI/TCP; IFT's CRCs are --ift-send-crc and --ift-check-crc");
        }
    }

    @Override
    Framing probeFraming(ClientMpaOptions mpa, boolean markersCase, long timeoutMs) {
        if (markersCase) {
            throw new IllegalArgumentException("--case markers is an MPA case; IFT never uses markers");
        }
        IftOptions.refuseMpaOptions(mpa);
        return options.ift.framing(timeoutMs, 1, 1);
    }

    @Override
    Class<?> traceLogger() {
        return dev.iwarp.ift.IftFramer.class;
    }

    @Override
    ClientWire clientWire(IwarpStack stack, int threads) {
        return IwarpWire.client(stack, options.ift.framing(10_000, 1, 1));
    }

    @Override
    RpingServer startServer(ServerConfig config, IwarpStack.Builder stack, TlsSettings tls, ServerSide side)
            throws Exception {
        return RpingServer.start(config, ServeOptions.on(stack.build())
                .framing(options.ift.framing(config.startupTimeoutMs(), config.ird(), config.ord())));
    }

    @Override
    String describe(RpingServer server) {
        return "IFT, " + transportName(server);
    }
}
