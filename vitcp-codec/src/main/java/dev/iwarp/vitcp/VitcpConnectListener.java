package dev.iwarp.vitcp;

/**
 * The application side of a listening discriminator: decides each matching ConnectRequest, possibly later
 * (draft-dicecco-vitcp-01 §4.3 Pending Accept; VipConnectWait/VipConnectAccept/VipConnectReject of [VIDG]).
 */
@FunctionalInterface
public interface VitcpConnectListener {
    /** Called on the connection's event loop; call {@code accept} or {@code reject} now or later, any thread. */
    void connectRequested(VitcpConnectRequest request);
}
