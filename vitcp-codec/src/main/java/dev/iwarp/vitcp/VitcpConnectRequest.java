package dev.iwarp.vitcp;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;

import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.IntSupplier;

/** A matched ConnectRequest waiting for the application's decision (draft-dicecco-vitcp-01 §4.3 Pending Accept). */
public interface VitcpConnectRequest {
    SocketAddress remoteAddress();

    /** The TCP connection the request came on (for the application's own handlers, e.g. an idle timer). */
    Channel channel();

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
    default CompletableFuture<VitcpConnection> accept(Function<VitcpConnection, ChannelHandler> connectedHandler,
                                                      IntSupplier rxDescriptorsPosted) {
        return accept(connectedHandler, rxDescriptorsPosted, null);
    }

    /**
     * As {@link #accept(Function, IntSupplier)}, with {@code callingDiscriminator} (0..64 octets) as the Calling
     * Discriminator of the ConnectAccept instead of the listening discriminator. §3.3 defines the field only "as
     * defined by the VI Architecture", whose discriminators are opaque consumer octets; the active end reports it as
     * {@link VitcpConnection#remoteDiscriminator()}, so an application can pass up to 64 octets to its peer with
     * the accept (iwarp-server advertises its target region this way). {@code null}: the listening discriminator.
     */
    CompletableFuture<VitcpConnection> accept(Function<VitcpConnection, ChannelHandler> connectedHandler,
                                              IntSupplier rxDescriptorsPosted, byte[] callingDiscriminator);

    /** Sends ConnectReject and closes the TCP connection (§4.3 "ConnectReject - VipConnectReject"); thread-safe. */
    void reject();
}
