package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.VitcpConnection;
import io.netty.channel.Channel;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/** One pending VipConnectRequest of a {@link ViProvider} (or peer-to-peer establishment) and its attempts so far. */
final class PendingConnect {
    final ViEndpoint endpoint;
    final InetSocketAddress bind;
    final InetSocketAddress remote;
    final byte[] localDisc;
    final byte[] remoteDisc;
    final boolean p2p;
    final long deadline;
    final CompletableFuture<VitcpConnection> result;
    final java.util.function.Consumer<? super Channel> channelHook;
    int attempts;
    long pauseMillis = ViProvider.RETRY_MILLIS;

    PendingConnect(ViEndpoint endpoint, InetSocketAddress bind, InetSocketAddress remote, byte[] localDisc,
                   byte[] remoteDisc, boolean p2p, long deadline, CompletableFuture<VitcpConnection> result,
                   java.util.function.Consumer<? super Channel> channelHook) {
        this.endpoint = endpoint;
        this.bind = bind;
        this.remote = remote;
        this.localDisc = localDisc;
        this.remoteDisc = remoteDisc;
        this.p2p = p2p;
        this.deadline = deadline;
        this.result = result;
        this.channelHook = channelHook;
    }
}
