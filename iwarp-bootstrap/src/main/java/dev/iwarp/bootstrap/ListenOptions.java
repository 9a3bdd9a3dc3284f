package dev.iwarp.bootstrap;

import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.mpa.MpaSettings;
import io.netty.channel.Channel;

import java.util.Objects;
import java.util.function.Consumer;

/** How {@link IwarpStack#listen(java.net.SocketAddress, ListenOptions, Consumer)} accepts connections. Immutable. */
public final class ListenOptions {
    private final Framing framing;
    private final TlsSettings tls;
    private final Consumer<? super Channel> onAccept;

    private ListenOptions(Framing framing, TlsSettings tls, Consumer<? super Channel> onAccept) {
        this.framing = Objects.requireNonNull(framing, "framing");
        this.tls = tls;
        this.onAccept = Objects.requireNonNull(onAccept, "onAccept");
    }

    /** Responder of {@code framing}, plain TCP (or the framing's own channels), no accept hook. */
    public static ListenOptions of(Framing framing) {
        return new ListenOptions(framing, null, ch -> { });
    }

    /** MPA Responder with these settings: shorthand for {@code of(MpaFraming.of(settings))}. */
    public static ListenOptions mpa(MpaSettings settings) {
        return of(MpaFraming.of(settings));
    }

    /**
     * Every connection inside TLS with {@code settings} ({@code null}: plain): the framing starts once the handshake
     * completed, and a peer that fails it (or is not TLS at all) is closed with one log line, never reaching
     * {@code onRequest}. MPA takes its MULPDU from the TLS record size ({@link Framing#overTls}).
     */
    public ListenOptions tls(TlsSettings settings) {
        return new ListenOptions(framing, settings, onAccept);
    }

    /**
     * Calls {@code hook} with every accepted connection's channel after the stack's channel hook and before the
     * framing's (or TLS's) handlers are added (e.g. to admit or refuse it, or to put a handler at its head).
     */
    public ListenOptions onAccept(Consumer<? super Channel> hook) {
        return new ListenOptions(framing, tls, hook);
    }

    public Framing framing() {
        return framing;
    }

    /** The TLS settings, or {@code null} for plain connections. */
    public TlsSettings tls() {
        return tls;
    }

    public Consumer<? super Channel> onAccept() {
        return onAccept;
    }
}
