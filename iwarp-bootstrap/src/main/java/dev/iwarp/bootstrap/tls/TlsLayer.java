package dev.iwarp.bootstrap.tls;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.net.SocketAddress;
import java.security.GeneralSecurityException;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Puts TLS below a framing: at the end of a pipeline (before any framing handler) a check that the
 * peer speaks TLS at all ({@link #CHECK}), the TLS handler ({@link #TLS}: Netty's {@link SslHandler}
 * over the engine of the settings' {@link TlsProvider}, or with an external PSK the adapter of Bouncy Castle's
 * TLS API)
 * and the handler that holds the framing back until the handshake completed ({@link #STATE}). The
 * framing, DDP and RDMAP are then installed by {@code afterHandshake}, unchanged: they see the
 * decrypted stream.
 *
 * <pre>
 *  [tls-check] [tls] [tls-gather] [tls-state] | afterHandshake: [mpa | ift] [llp] [ddp] [rdmap]
 * </pre>
 */
public final class TlsLayer {
    /** Handler names. */
    public static final String CHECK = "tls-check";
    public static final String TLS = "tls";
    public static final String STATE = "tls-state";
    /** Gathers the plaintext for Netty's {@code SslHandler} ({@link TlsWriteGatherer}). */
    public static final String GATHER = "tls-gather";

    /**
     * Plaintext octets the TLS handler takes from its queue of writes per round ({@code SslHandler.setWrapDataSize}),
     * and what {@link TlsWriteGatherer} gathers into one buffer: eight records' worth (RFC 8446 §5.1: at most 2^14
     * octets each). Netty's default, one record's worth, seals a large write one record per round, each with its own
     * output buffer, promise and outbound entry; four per round cut what the sending side allocates per 64 KiB message
     * from 1,144 to 848 octets over OpenSSL. Eight take a 64 KiB message with its FPDUs' headers and trailers (a
     * little more than 64 KiB) in one round instead of a second one for its last few octets. The records are the
     * same: full ones from the start of what was written since the last flush, and an FPDU of MULPDU octets still
     * fills one exactly.
     */
    public static final int WRAP_DATA_SIZE = 8 * TlsSettings.MAX_RECORD_PAYLOAD;

    private static final AttributeKey<TlsException> FAILURE = AttributeKey.valueOf(TlsLayer.class, "failure");

    private TlsLayer() {
    }

    /**
     * Why the TLS layer failed {@code ch} after its handshake (a fatal alert or a bad record, e.g.
     * the server refusing our certificate after a TLS 1.3 client already finished; or a peer that
     * closed TCP without close_notify: {@link TlsException.Kind#TRUNCATED}), or {@code null}: the
     * cause to report when the framing's startup then fails, or the connection ends, on it.
     */
    public static TlsException failure(Channel ch) {
        return ch.attr(FAILURE).get();
    }

    /**
     * The TLS session of {@code ch} in a few words, e.g. {@code TLSv1.3 TLS_AES_128_GCM_SHA256} or
     * {@code TLSv1.3 external PSK}, or {@code null} when it has no TLS layer.
     */
    public static String describe(Channel ch) {
        Object h = ch.pipeline().get(TLS);
        if (h instanceof SslHandler) {
            javax.net.ssl.SSLSession s = ((SslHandler) h).engine().getSession();
            return s.getProtocol() + " " + s.getCipherSuite();
        }
        return h instanceof PskTlsHandler ? "TLSv1.3 external PSK" : null;
    }

    /**
     * Sends {@code ch}'s TLS close_notify (RFC 8446 §6.1) and leaves the connection open, over either TLS handler
     * (Netty's {@code SslHandler} or the external-PSK one); a graceful close then waits for the peer's answer or
     * FIN. {@code null} when the channel carries no TLS. On the channel's event loop.
     */
    public static Future<?> closeOutbound(Channel ch) {
        TlsLifecycle lifecycle = ch.pipeline().get(TlsLifecycle.class);
        if (lifecycle != null) {
            lifecycle.closingOutbound();
        }
        SslHandler ssl = ch.pipeline().get(SslHandler.class);
        if (ssl != null) {
            TlsWriteGatherer gather = ch.pipeline().get(TlsWriteGatherer.class);
            if (gather != null) {
                gather.handOver(); // what was written goes before the close_notify
            }
            return ssl.closeOutbound();
        }
        PskTlsHandler psk = ch.pipeline().get(PskTlsHandler.class);
        return psk == null ? null : psk.closeOutbound();
    }

    static void recordFailure(Channel ch, TlsException e) {
        ch.attr(FAILURE).setIfAbsent(e);
    }

    /**
     * Adds the client side of TLS to {@code p} for a connection to {@code remote} (the name checked
     * against the server's certificate, unless the settings name one). Returns the handshake's
     * outcome: the channel, or a {@link TlsException}.
     */
    public static Future<Channel> addClient(ChannelPipeline p, TlsSettings settings, SocketAddress remote,
                                            Consumer<ChannelPipeline> afterHandshake) {
        return add(p, settings, true, remote, afterHandshake);
    }

    /** Adds the server side of TLS to {@code p}; see {@link #addClient}. */
    public static Future<Channel> addServer(ChannelPipeline p, TlsSettings settings,
                                            Consumer<ChannelPipeline> afterHandshake) {
        return add(p, settings, false, null, afterHandshake);
    }

    private static Future<Channel> add(ChannelPipeline p, TlsSettings s, boolean client, SocketAddress remote,
                                       Consumer<ChannelPipeline> afterHandshake) {
        Objects.requireNonNull(afterHandshake);
        Channel ch = p.channel();
        Promise<Channel> handshake = ch.eventLoop().newPromise();
        p.addLast(CHECK, new TlsFirstRecordCheck(!client));
        if (s.psk() != null) {
            PskTlsHandler psk = new PskTlsHandler(s, client);
            p.addLast(TLS, psk);
            p.addLast(STATE, new TlsLifecycle(afterHandshake, handshake, psk::closeNotifyFuture,
                    s.handshakeTimeoutMillis()));
            return handshake;
        }
        SslHandler ssl;
        try {
            ssl = client ? TlsContexts.clientHandler(s.engines(), ch.alloc(), s, remote)
                    : TlsContexts.serverHandler(s.engines(), ch.alloc(), s);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("TLS settings unusable: " + e.getMessage(), e);
        }
        ssl.setHandshakeTimeoutMillis(s.handshakeTimeoutMillis());
        p.addLast(TLS, ssl);
        p.addLast(GATHER, new TlsWriteGatherer(WRAP_DATA_SIZE, s.provider() == TlsProvider.OPENSSL));
        p.addLast(STATE, new TlsLifecycle(afterHandshake, handshake, ssl::sslCloseFuture, s.handshakeTimeoutMillis()));
        return handshake;
    }
}
