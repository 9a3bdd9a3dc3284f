package dev.iwarp.vitcp;

import io.netty.channel.ChannelHandler;

import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.IntSupplier;

/** A matched ConnectRequest waiting for the application's decision (draft-dicecco-vitcp-01 §4.3 Pending Accept). */
public interface VitcpConnectRequest {
    SocketAddress remoteAddress();

    /** The peer's CE Header. */
    ViCeHeader ceHeader();

    /** Receive descriptors the peer posted before connecting (its Rx Descriptors Posted). */
    int remoteRxDescriptorsPosted();

    /**
     * Sends ConnectAccept and enters Connected; thread-safe. Completes exceptionally if the TCP connection has gone
     * or a decision was already taken.
     *
     * @param connectedHandler builds the full-operation handler that replaces the startup handler (may return null)
     * @param rxDescriptorsPosted receives already posted, reported in the ConnectAccept (may be null: 0)
     */
    CompletableFuture<VitcpConnection> accept(Function<VitcpConnection, ChannelHandler> connectedHandler,
                                              IntSupplier rxDescriptorsPosted);

    /** Sends ConnectReject and closes the TCP connection (§4.3 "ConnectReject - VipConnectReject"); thread-safe. */
    void reject();
}
