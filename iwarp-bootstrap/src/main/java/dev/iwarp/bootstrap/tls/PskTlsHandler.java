package dev.iwarp.bootstrap.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsProtocol;
import org.bouncycastle.tls.TlsServerProtocol;
import org.bouncycastle.tls.crypto.TlsCrypto;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeUnit;

/**
 * Adapts Bouncy Castle's TLS API in non-blocking mode ({@link TlsClientProtocol} /
 * {@link TlsServerProtocol} without streams) to a Netty pipeline for an external PSK: inbound octets
 * are offered to the protocol, what it decrypts travels on up, what it has to send (handshake,
 * records, alerts) is written down; the record layer is Bouncy Castle's. Reports like
 * {@code SslHandler}: an {@link SslHandshakeCompletionEvent} and a future that completes when the
 * peer's close_notify arrived. Writes before the handshake completed wait for it.
 *
 * <p>Bouncy Castle's API takes and returns byte arrays, so each payload is copied once into its
 * record layer and each decrypted run once out of it (the certificate path, {@code SslHandler},
 * needs neither copy).
 */
final class PskTlsHandler extends ChannelDuplexHandler implements PskPeers.Events {
    /** Longest wait for our close_notify to leave before the connection closes anyway (SslHandler's default). */
    static final long CLOSE_NOTIFY_FLUSH_MILLIS = 3_000;
    private final TlsSettings settings;
    private final boolean client;
    private TlsProtocol protocol;
    private ChannelHandlerContext ctx;
    private PendingWriteQueue pending;
    private Promise<Channel> closeNotify;
    private ScheduledFuture<?> timeout;
    private boolean started;
    private boolean handshakeDone;
    private boolean handshakeReported;
    private boolean failed;

    PskTlsHandler(TlsSettings settings, boolean client) {
        this.settings = settings;
        this.client = client;
    }

    Future<Channel> closeNotifyFuture() {
        return closeNotify;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        this.pending = new PendingWriteQueue(ctx);
        this.closeNotify = ctx.executor().newPromise();
        if (ctx.channel().isActive()) {
            start();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start();
        super.channelActive(ctx);
    }

    private void start() {
        if (started) {
            return;
        }
        started = true;
        timeout = ctx.executor().schedule(() -> handshakeFailed(new SslHandshakeTimeoutException(
                "handshake timed out after " + settings.handshakeTimeoutMillis() + "ms")),
                settings.handshakeTimeoutMillis(), TimeUnit.MILLISECONDS);
        TlsCrypto crypto = PskPeers.crypto();
        try {
            if (client) {
                TlsClientProtocol p = new TlsClientProtocol();
                protocol = p;
                p.connect(new PskPeers.Client(crypto, settings.psk(), this));
            } else {
                TlsServerProtocol p = new TlsServerProtocol();
                protocol = p;
                p.accept(new PskPeers.Server(crypto, settings.psk(), this));
            }
            drainOutput(ctx.newPromise(), true);
        } catch (IOException e) {
            handshakeFailed(e);
        }
    }

    @Override
    public void handshakeComplete() {
        handshakeDone = true;
    }

    @Override
    public void closeNotifyReceived() {
        closeNotify.trySuccess(ctx.channel());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (!(msg instanceof ByteBuf) || failed || handshakeReported && protocol.isClosed()) {
            // after a close_notify either way the protocol takes no more input: the peer's answer to ours, or what
            // it still sends while our graceful close drains the connection, is discarded (as the framer would)
            ReferenceCountUtil.release(msg);
            return;
        }
        byte[] in;
        try {
            in = ByteBufUtil.getBytes((ByteBuf) msg);
        } finally {
            ((ByteBuf) msg).release();
        }
        try {
            protocol.offerInput(in);
        } catch (IOException e) {
            drainOutput(ctx.newPromise(), true); // our alert, if the protocol queued one
            if (handshakeReported) {
                failed = true;
                ctx.fireExceptionCaught(new SSLException("TLS record rejected: " + e.getMessage(), e));
            } else {
                handshakeFailed(e);
            }
            return;
        }
        drainOutput(ctx.newPromise(), true);
        if (handshakeDone && !handshakeReported) {
            handshakeReported = true;
            timeout.cancel(false);
            ctx.fireUserEventTriggered(SslHandshakeCompletionEvent.SUCCESS);
            writePending(ctx);
            ctx.flush();
        }
        int available = protocol.getAvailableInputBytes();
        if (available > 0) {
            ByteBuf out = ctx.alloc().buffer(available);
            protocol.readInput(out.internalNioBuffer(0, available), available);
            out.writerIndex(available);
            ctx.fireChannelRead(out);
        }
        if (closeNotify.isSuccess() && ctx.channel().isActive()) {
            // the peer's close_notify ends its stream as a FIN ends a TCP one; the protocol answered it with ours
            // (RFC 8446 §6.1), so the connection closes as the plain framings' does at the peer's FIN
            ctx.close();
        }
    }

    /**
     * Encrypts what was written before the handshake completed, in order. Not
     * {@code PendingWriteQueue.removeAndWriteAll}: that writes past this handler, in the clear.
     */
    private void writePending(ChannelHandlerContext ctx) throws Exception {
        while (!pending.isEmpty()) {
            Object msg = ReferenceCountUtil.retain(pending.current());
            ChannelPromise promise = pending.remove(); // releases its reference, ours remains
            write(ctx, msg, promise);
        }
    }

    private void handshakeFailed(Throwable cause) {
        if (handshakeReported) {
            return;
        }
        handshakeReported = true;
        failed = true;
        if (timeout != null) {
            timeout.cancel(false);
        }
        pending.removeAndFailAll(cause);
        ctx.fireUserEventTriggered(new SslHandshakeCompletionEvent(cause));
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (!(msg instanceof ByteBuf)) {
            ctx.write(msg, promise);
            return;
        }
        if (!handshakeReported) {
            pending.add(msg, promise);
            return;
        }
        ByteBuf buf = (ByteBuf) msg;
        try {
            if (failed || protocol.isClosed()) {
                promise.tryFailure(new ClosedChannelException());
                return;
            }
            if (buf.hasArray()) {
                protocol.writeApplicationData(buf.array(), buf.arrayOffset() + buf.readerIndex(), buf.readableBytes());
            } else if (buf.isReadable()) {
                byte[] copy = ByteBufUtil.getBytes(buf);
                protocol.writeApplicationData(copy, 0, copy.length);
            }
        } catch (IOException e) {
            promise.tryFailure(e);
            return;
        } finally {
            buf.release();
        }
        drainOutput(promise, false);
    }

    /** Writes what the protocol has to send with {@code promise}; completes it when there is nothing. */
    private void drainOutput(ChannelPromise promise, boolean flush) {
        int n = protocol == null ? 0 : protocol.getAvailableOutputBytes();
        if (n == 0) {
            promise.trySuccess();
            return;
        }
        ByteBuf out = ctx.alloc().buffer(n);
        protocol.readOutput(out.internalNioBuffer(0, n), n);
        out.writerIndex(n);
        if (flush) {
            ctx.writeAndFlush(out, promise);
        } else {
            ctx.write(out, promise);
        }
    }

    /**
     * Sends our close_notify (RFC 8446 §6.1) and leaves the connection open, as {@code SslHandler.closeOutbound}
     * does: a graceful close then waits for the peer's. The future completes once the alert was written (at once
     * when there is no session to close).
     */
    ChannelFuture closeOutbound() {
        ChannelPromise sent = ctx.newPromise();
        if (protocol != null && handshakeReported && !failed && !protocol.isClosed()) {
            try {
                protocol.close();
            } catch (IOException e) {
                return sent.setFailure(e);
            }
            drainOutput(sent, true);
        } else {
            sent.setSuccess();
        }
        return sent;
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        if (protocol != null && handshakeReported && !failed && !protocol.isClosed()) {
            try {
                protocol.close(); // our close_notify (RFC 8446 §6.1)
            } catch (IOException ignored) {
                // the connection closes anyway
            }
            ChannelPromise sent = ctx.newPromise();
            drainOutput(sent, true);
            // a peer that reads nothing more would hold the close (and all the connection holds) forever: as
            // SslHandler, close once the close_notify left or after CLOSE_NOTIFY_FLUSH_MILLIS, whichever comes first
            Runnable closeOnce = new Runnable() {
                private boolean done;

                @Override
                public void run() {
                    if (!done) {
                        done = true;
                        ctx.close(promise);
                    }
                }
            };
            ScheduledFuture<?> forced = ctx.executor().schedule(closeOnce, CLOSE_NOTIFY_FLUSH_MILLIS,
                    TimeUnit.MILLISECONDS);
            sent.addListener((ChannelFutureListener) f -> {
                forced.cancel(false);
                closeOnce.run();
            });
            return;
        }
        ctx.close(promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (!handshakeReported) {
            handshakeFailed(new ClosedChannelException());
        }
        closeNotify.tryFailure(new ClosedChannelException());
        pending.removeAndFailAll(new ClosedChannelException());
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (timeout != null) {
            timeout.cancel(false);
        }
        if (!pending.isEmpty()) {
            pending.removeAndFailAll(new ClosedChannelException());
        }
    }
}
