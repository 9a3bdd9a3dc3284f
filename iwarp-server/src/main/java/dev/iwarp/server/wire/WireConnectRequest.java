package dev.iwarp.server.wire;

import io.netty.channel.Channel;

/** A connection waiting for the server's decision: an MPA Request, or a matched VI/TCP ConnectRequest. */
public interface WireConnectRequest {
    /** The TCP connection it came on. */
    Channel channel();

    /**
     * Accepts: MPA Reply with {@code setupData} as Private Data; VI/TCP ConnectAccept with {@code setupData} as
     * its Calling Discriminator (max 64 octets; empty: the listening discriminator). Call on the event loop.
     */
    WireConnection accept(WireDomain domain, WireCompletionListener listener, byte[] setupData);

    /** Refuses: MPA Reply with R=1; VI/TCP ConnectReject (§4.3). The TCP connection closes. */
    void reject();
}
