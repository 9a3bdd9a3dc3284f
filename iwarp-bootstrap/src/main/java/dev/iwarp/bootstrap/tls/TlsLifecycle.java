package dev.iwarp.bootstrap.tls;

import dev.iwarp.framing.PeerAddress;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsFatalAlertReceived;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Sits right above the TLS handler for the life of the connection. Until the handshake completed it
 * holds the framing back: on success it installs the framing and the layers above (so MPA's startup,
 * and its timer, begin only inside an established TLS session), on failure it logs one line naming
 * what went wrong, fails the handshake promise with a {@link TlsException} and closes. Afterwards it
 * turns a record error into one log line and a close, and reports a peer that closed TCP without a
 * close_notify (RFC 8446 §6.1: a truncation the framing above then sees as a lost connection).
 */
final class TlsLifecycle extends ChannelDuplexHandler {
    private static final Logger LOG = LoggerFactory.getLogger(TlsLayer.class);

    private final Consumer<ChannelPipeline> afterHandshake;
    private final Promise<Channel> handshake;
    private final Supplier<Future<Channel>> closeNotifyReceived;
    private final long timeoutMillis;
    private TlsException firstError;
    private boolean established;
    private boolean closing;

    TlsLifecycle(Consumer<ChannelPipeline> afterHandshake, Promise<Channel> handshake,
                 Supplier<Future<Channel>> closeNotifyReceived, long timeoutMillis) {
        this.afterHandshake = afterHandshake;
        this.handshake = handshake;
        this.closeNotifyReceived = closeNotifyReceived;
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (!(evt instanceof SslHandshakeCompletionEvent)) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        SslHandshakeCompletionEvent e = (SslHandshakeCompletionEvent) evt;
        if (e.isSuccess()) {
            established = true;
            if (LOG.isDebugEnabled()) {
                LOG.debug("TLS with {} established: {}", PeerAddress.of(ctx), describeSession(ctx));
            }
            afterHandshake.accept(ctx.pipeline());
            handshake.trySuccess(ctx.channel());
            return;
        }
        TlsException failure = firstError != null ? firstError : classify(e.cause());
        fail(ctx, failure);
    }

    private void fail(ChannelHandlerContext ctx, TlsException failure) {
        if (handshake.tryFailure(failure)) {
            LOG.warn("TLS with {} failed: {}", PeerAddress.of(ctx), failure.getMessage());
        }
        closing = true;
        // after what the TLS handler is still writing in this event (its fatal alert) has been queued
        ctx.executor().execute(() -> ctx.channel().close());
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable c = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (!established) {
            if (firstError == null) {
                firstError = c instanceof TlsException ? (TlsException) c : classify(c);
            }
            if (c instanceof TlsException) {
                fail(ctx, firstError);
            }
            return; // the TLS handler fails the handshake too; one line is logged there
        }
        if (c instanceof SSLException) {
            if (!closing) {
                closing = true;
                TlsException e = new TlsException(TlsException.Kind.BAD_RECORD, "TLS connection failed: " + reason(c), c);
                TlsLayer.recordFailure(ctx.channel(), e);
                LOG.warn("TLS with {} failed, closing: {}", PeerAddress.of(ctx), reason(c));
            }
            ctx.channel().close();
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        closing = true;
        ctx.close(promise);
    }

    /**
     * Our close_notify went out (a graceful close): the peer's FIN that follows ends a stream we ended, not a
     * truncation, whether or not its own close_notify was read first.
     */
    void closingOutbound() {
        closing = true;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (established && !closing && !closeNotifyReceived.get().isSuccess()) {
            TlsLayer.recordFailure(ctx.channel(), new TlsException(TlsException.Kind.TRUNCATED,
                    "the peer closed TCP without a TLS close_notify (RFC 8446 §6.1): the stream may be truncated", null));
            LOG.warn("{} closed TCP without a TLS close_notify: the stream may be truncated; what it carried"
                    + " after the last complete FPDU is discarded", PeerAddress.of(ctx));
        }
        super.channelInactive(ctx);
    }

    private TlsException classify(Throwable c) {
        if (c instanceof TlsException) {
            return (TlsException) c;
        }
        if (c instanceof SslHandshakeTimeoutException) {
            return new TlsException(TlsException.Kind.HANDSHAKE_TIMEOUT,
                    "no TLS handshake within " + timeoutMillis + " ms", c);
        }
        if (c instanceof ClosedChannelException) {
            return new TlsException(TlsException.Kind.HANDSHAKE,
                    "the peer closed the connection during the TLS handshake (is it a TLS peer?)", c);
        }
        return new TlsException(TlsException.Kind.HANDSHAKE, "TLS handshake failed: " + reason(c), c);
    }

    /** What happened, in TLS terms: the alert the peer sent, or ours with its reason (a certificate's). */
    static String reason(Throwable t) {
        String certificate = null;
        TlsFatalAlert sent = null;
        String sentByOpenSsl = null;
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof TlsFatalAlertReceived) {
                return "the peer sent TLS alert " + AlertDescription.getText(((TlsFatalAlertReceived) c).getAlertDescription());
            }
            String received = receivedAlert(c);
            if (received != null) {
                return "the peer sent TLS alert " + withCode(received);
            }
            if (c instanceof TlsFatalAlert && sent == null) {
                sent = (TlsFatalAlert) c;
            }
            if (sentByOpenSsl == null) {
                sentByOpenSsl = OpenSslTrust.alertSent(c);
            }
            if ((c instanceof CertificateException || c instanceof CertPathValidatorException) && c.getMessage() != null
                    && certificate == null) { // the outermost: ours explains the provider's
                certificate = c.getMessage();
            }
        }
        if (certificate != null) {
            String alert = sent != null ? AlertDescription.getText(sent.getAlertDescription()) : sentByOpenSsl;
            return certificate + (alert != null ? " (we sent TLS alert " + alert + ")" : "");
        }
        if (sent != null) {
            return "we sent TLS alert " + sent.getMessage();
        }
        String ours = sentAlert(t);
        if (ours != null) {
            return "we sent TLS alert " + withCode(ours);
        }
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }

    /**
     * An alert's name as every provider's failure reads: with its code (RFC 8446 §6, "certificate_unknown(46)"), as
     * Bouncy Castle's own text gives it, for the names the JDK's and OpenSSL's messages carry.
     */
    static String withCode(String name) {
        short code = TlsException.alertCode(name);
        return code < 0 ? name : AlertDescription.getText(code);
    }

    /** The JDK's "Received fatal alert: NAME" and OpenSSL's "..._ALERT_NAME" (BoringSSL's reason for a received alert). */
    private static final java.util.regex.Pattern RECEIVED_ALERT =
            java.util.regex.Pattern.compile("Received fatal alert: (\\w+)|(?:SSLV3|TLSV1)_ALERT_([A-Z_]+)");

    /** The alert named by a JSSE or OpenSSL exception's message as received from the peer, or null. */
    static String receivedAlert(Throwable c) {
        if (!(c instanceof SSLException) || c.getMessage() == null) {
            return null;
        }
        java.util.regex.Matcher m = RECEIVED_ALERT.matcher(c.getMessage());
        if (!m.find()) {
            return null;
        }
        return m.group(1) != null ? m.group(1) : m.group(2).toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * The alert OpenSSL sent for the reasons it names in its own words: a server that requires a certificate and got
     * none answers certificate_required (RFC 8446 §4.4.2.4); a record that fails to open, bad_record_mac (§5.2).
     */
    static String sentAlert(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            String m = c.getMessage();
            if (!(c instanceof SSLException) || m == null) {
                continue;
            }
            if (m.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE")) {
                return "certificate_required";
            }
            if (m.contains("DECRYPTION_FAILED_OR_BAD_RECORD_MAC") || m.contains("BAD_DECRYPT")) {
                return "bad_record_mac";
            }
        }
        return null;
    }

    private static String describeSession(ChannelHandlerContext ctx) {
        io.netty.handler.ssl.SslHandler ssl = ctx.pipeline().get(io.netty.handler.ssl.SslHandler.class);
        if (ssl == null) {
            return "external PSK";
        }
        SSLSession s = ssl.engine().getSession();
        return s.getProtocol() + " " + s.getCipherSuite();
    }
}
