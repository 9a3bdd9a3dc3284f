package dev.iwarp.server;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.ServerWire;

import java.util.Objects;

/**
 * What {@link RpingServer#start(ServerConfig, ServeOptions)} listens on: an {@link IwarpStack} (an MPA Responder
 * with {@link ServerMpaOptions} unless another framing is given, optionally inside TLS) or any other
 * {@link ServerWire}. Immutable, shaped like {@link dev.iwarp.bootstrap.ListenOptions}.
 */
public final class ServeOptions {
    private final IwarpStack stack;
    private final ServerWire wire;
    private final Framing framing;
    private final ServerMpaOptions mpa;
    private final TlsSettings tls;
    private final boolean ownsStack;

    private ServeOptions(IwarpStack stack, ServerWire wire, Framing framing, ServerMpaOptions mpa, TlsSettings tls,
                         boolean ownsStack) {
        this.stack = stack;
        this.wire = wire;
        this.framing = framing;
        this.mpa = mpa;
        this.tls = tls;
        this.ownsStack = ownsStack;
    }

    /**
     * On {@code stack}, which {@link RpingServer#close()} also closes; an MPA Responder with
     * {@link ServerMpaOptions#defaults()}, plain TCP.
     */
    public static ServeOptions on(IwarpStack stack) {
        return new ServeOptions(Objects.requireNonNull(stack, "stack"), null, null, ServerMpaOptions.defaults(), null,
                true);
    }

    /** On {@code wire} (VI/TCP, SCTP or an already built iWARP wire), which {@link RpingServer#close()} closes. */
    public static ServeOptions on(ServerWire wire) {
        return new ServeOptions(null, Objects.requireNonNull(wire, "wire"), null, null, null, false);
    }

    /** The Responder of {@code framing} (e.g. IFT) instead of MPA. */
    public ServeOptions framing(Framing framing) {
        requireStack("framing");
        return new ServeOptions(stack, null, Objects.requireNonNull(framing, "framing"), null, tls, ownsStack);
    }

    /** An MPA Responder with {@code options} (serve's {@code --crc}, {@code --markers}, ...) instead of the defaults. */
    public ServeOptions mpa(ServerMpaOptions options) {
        requireStack("mpa");
        return new ServeOptions(stack, null, null, Objects.requireNonNull(options, "options"), tls, ownsStack);
    }

    /** Every connection inside TLS with {@code settings} ({@code null}: plain TCP). */
    public ServeOptions tls(TlsSettings settings) {
        requireStack("tls");
        return new ServeOptions(stack, null, framing, mpa, settings, ownsStack);
    }

    private void requireStack(String what) {
        if (stack == null) {
            throw new IllegalStateException(what + " applies to a stack, not to an already built wire");
        }
    }

    IwarpStack stack() {
        return stack;
    }

    ServerWire wire() {
        return wire;
    }

    Framing framing() {
        return framing;
    }

    /** MPA's options where the framing is MPA (no {@link #framing()} given); else {@code null}. */
    ServerMpaOptions mpa() {
        return mpa;
    }

    TlsSettings tls() {
        return tls;
    }

    boolean ownsStack() {
        return ownsStack;
    }
}
