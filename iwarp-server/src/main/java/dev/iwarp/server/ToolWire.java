package dev.iwarp.server;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.ClientWire;

/**
 * What the tools need to know about one {@code --wire}: its options and how they are checked, its default port,
 * what it supports (TLS, pcap, a chosen transport) and how its server and client wires are built. The commands
 * ask this strategy and never branch on the wire themselves; {@link WireOptions#tool()} picks it: {@link MpaToolWire},
 * {@link VitcpToolWire}, {@link IftToolWire} or {@link SctpToolWire}.
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
}
