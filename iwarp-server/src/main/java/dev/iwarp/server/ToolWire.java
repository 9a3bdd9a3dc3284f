package dev.iwarp.server;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.SctpWire;
import dev.iwarp.server.wire.VitcpWire;

/**
 * What the tools need to know about one {@code --wire}: its options and how they are checked, its default port,
 * what it supports (TLS, pcap, a chosen transport) and how its server and client wires are built. The commands
 * ask this strategy and never branch on the wire themselves; {@link WireOptions#tool()} picks it.
 */
abstract class ToolWire {
    /**
     * How a server differs between serve and demo: MPA's options, VI/TCP's read window, incoming timeout, CRC rule,
     * threads, and what wraps its own event loops' I/O handlers (serve's busy-time metrics).
     */
    record ServerSide(ServerMpaOptions mpa, int readWindow, long incomingTimeoutMs, boolean requireCrc, int threads,
                      java.util.function.UnaryOperator<io.netty.channel.IoHandlerFactory> ioHandlers) {
        static final ServerSide DEMO = new ServerSide(ServerMpaOptions.defaults(), 16, 0, false, 1,
                java.util.function.UnaryOperator.identity());
    }

    final WireOptions options;

    ToolWire(WireOptions options) {
        this.options = options;
    }

    /** The {@code --wire} value. */
    abstract String name();

    abstract int defaultPort();

    /** Whether it runs MPA, the one wire TLS wraps (RFC 5044 §4, over TCP). */
    boolean carriesTls() {
        return false;
    }

    /** Whether serve/demo --pcap can capture it (a TCP stream). */
    boolean capturable() {
        return false;
    }

    /** Whether it runs on the stack's transport ({@code --transport}); VI/TCP and SCTP bring their own. */
    boolean usesStackTransport() {
        return true;
    }

    /** Whether it needs an {@link IwarpStack} (VI/TCP does not). */
    boolean usesStack() {
        return true;
    }

    /** The stack {@code b} builds, or null on a wire without one. */
    final IwarpStack stack(IwarpStack.Builder b) {
        return usesStack() ? b.build() : null;
    }

    /** Checks its own options (one-line {@link IllegalArgumentException}); options of another wire are refused. */
    void check() {
        options.ift.refuseUnlessIft(false);
    }

    /** Refuses serve's options this wire does not have; {@code mpa}: its MPA options, {@code pcap}: --pcap given. */
    abstract void checkServe(ServerMpaOptions mpa, boolean pcap, boolean trace);

    /** Refuses bench's options this wire does not have. */
    void checkBench(boolean crc) {
    }

    /** The framing probe speaks, with {@code markers} for its markers case; refuses what it cannot probe. */
    Framing probeFraming(ClientMpaOptions mpa, boolean markersCase, long timeoutMs) {
        throw new IllegalArgumentException("probe runs over --wire iwarp or --wire ift, not " + name());
    }

    /** The class whose logger serve --trace turns up (its framing's receive path). */
    Class<?> traceLogger() {
        throw new IllegalStateException("no trace on --wire " + name());
    }

    /** The client wire on {@code stack} (null where {@link #usesStack()} is false), {@code threads} event loops. */
    abstract ClientWire clientWire(IwarpStack stack, int threads);

    /** The client wire of the tools with MPA Initiator options (ping, sendrecv), which other wires refuse. */
    ClientWire clientWire(IwarpStack stack, ClientMpaOptions mpa) {
        IftOptions.refuseMpaOptions(mpa);
        return clientWire(stack, 1);
    }

    /**
     * The client wire inside TLS with {@code tls} (null: plain); only a wire that {@link #carriesTls()} is given one
     * ({@link TlsOptions} refuses --tls on the others first).
     */
    ClientWire clientWire(IwarpStack stack, int threads, TlsSettings tls) {
        refuseTls(tls);
        return clientWire(stack, threads);
    }

    /** As {@link #clientWire(IwarpStack, ClientMpaOptions)}, inside TLS with {@code tls} (null: plain). */
    ClientWire clientWire(IwarpStack stack, ClientMpaOptions mpa, TlsSettings tls) {
        refuseTls(tls);
        return clientWire(stack, mpa);
    }

    private void refuseTls(TlsSettings tls) {
        if (tls != null) {
            throw new IllegalStateException("no TLS on --wire " + name());
        }
    }

    /** Starts serve's or demo's server; {@code stack} is unused where {@link #usesStack()} is false. */
    abstract RpingServer startServer(ServerConfig config, IwarpStack.Builder stack, TlsSettings tls, ServerSide side)
            throws Exception;

    /** demo's description of the running server, e.g. "IFT, nio". */
    abstract String describe(RpingServer server);

    static String transportName(RpingServer server) {
        return server.stack().transport().name().toLowerCase(java.util.Locale.ROOT);
    }

    /** iWARP: MPA/DDP/RDMAP over TCP (RFC 5044, 5041, 5040). */
    static final class Mpa extends ToolWire {
        Mpa(WireOptions options) {
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

    /** VI/TCP (draft-dicecco-vitcp-01): its own provider and NIO threads, no stack. */
    static final class Vitcp extends ToolWire {
        Vitcp(WireOptions options) {
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

    /** DDP/RDMAP over IFT (draft-williams-iwarp-ift-01). */
    static final class Ift extends ToolWire {
        Ift(WireOptions options) {
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

    /** DDP/RDMAP over SCTP (draft-stewart-otis-sctp-ddp-rdma-00): the JDK's SCTP channels, NIO. */
    static final class Sctp extends ToolWire {
        Sctp(WireOptions options) {
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
}
