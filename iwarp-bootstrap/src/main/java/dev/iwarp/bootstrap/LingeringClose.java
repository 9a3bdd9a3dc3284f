package dev.iwarp.bootstrap;

import dev.iwarp.bootstrap.tls.TlsLayer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.concurrent.Future;

import java.util.concurrent.TimeUnit;

/**
 * How a TCP framing closes once its last octet is on the wire: the output first (a FIN; inside TLS a
 * close_notify), then the input is drained until the peer's FIN, or {@link #DRAIN_MILLIS} at most, before the
 * socket closes. Closing the socket at once while the peer is still sending leaves its octets unread, and the
 * kernel answers them with a reset, which can destroy a Terminate the peer has not read yet (RFC 5040 §5.4:
 * the Terminate is the last message of the stream and must reach the peer). The framer discards what arrives
 * meanwhile. Channels that cannot half-close simply close.
 */
final class LingeringClose implements ChannelFutureListener {
    /** Longest wait for the peer's FIN after ours; the connection is closed then in any case. */
    static final long DRAIN_MILLIS = 2_000;
    /**
     * The wait in effect: {@link #DRAIN_MILLIS}. Tests of this package that check a Terminate's delivery to a busy
     * peer lengthen it, so that a peer process starved of CPU for two seconds on a loaded machine (it reads the
     * Terminate late, and our close after the deadline answers its octets with a reset) does not fail them.
     */
    static volatile long drainMillis = DRAIN_MILLIS;

    static final LingeringClose INSTANCE = new LingeringClose();

    private LingeringClose() {
    }

    @Override
    public void operationComplete(ChannelFuture flushed) {
        Channel ch = flushed.channel();
        if (!ch.isActive()) {
            ch.close();
            return;
        }
        Future<?> outputClosed = TlsLayer.closeOutbound(ch); // inside TLS a close_notify, never a bare FIN
        if (outputClosed == null) {
            if (!(ch instanceof DuplexChannel) || ((DuplexChannel) ch).isOutputShutdown()) {
                ch.close();
                return;
            }
            outputClosed = ((DuplexChannel) ch).shutdownOutput();
        }
        // the peer's FIN closes the channel (half-closure is not allowed on our channels); this bounds the wait
        Future<?> deadline = ch.eventLoop().schedule(() -> ch.close(), drainMillis, TimeUnit.MILLISECONDS);
        ch.closeFuture().addListener(f -> deadline.cancel(false));
        outputClosed.addListener(f -> {
            if (!f.isSuccess()) {
                ch.close();
            }
        });
    }
}
