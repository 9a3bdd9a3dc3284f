package dev.iwarp.ift;

import java.util.Objects;

/**
 * The outcome of a successful adaption: everything the framer and the layers above need, immutable.
 * Carried by {@link IftAdaptionCompletionEvent} and {@link IftAdaptionHandler#adaptionFuture()}.
 *
 * <p>IFT carries no IRD/ORD, no RTR and no private data: the ULP agrees on those beforehand (IFT draft
 * §4: the indication is never the initial offer to use RDDP).
 */
public final class IftParameters {
    private final IftRole role;
    private final IftAdaptionIndication local;
    private final IftAdaptionIndication peer;
    private final int mulpdu;
    private final int maxHeaderSize;
    private final int maxPayloadSize;
    private final int ddpVersion;
    private final IftHeaderLength headerLength;

    private IftParameters(IftRole role, IftAdaptionIndication local, IftAdaptionIndication peer, IftSettings s) {
        this.role = Objects.requireNonNull(role, "role");
        this.local = Objects.requireNonNull(local, "local");
        this.peer = Objects.requireNonNull(peer, "peer");
        if (local.rdmaMode() != peer.rdmaMode()) {
            throw new IllegalArgumentException("R bits differ: no common mode");
        }
        this.mulpdu = mulpdu(s, local);
        this.maxHeaderSize = s.maxHeaderSize();
        this.maxPayloadSize = s.maxPayloadSize();
        this.ddpVersion = s.ddpVersion();
        this.headerLength = s.headerLength();
    }

    /**
     * The parameters that follow from the two indications (IFT draft §4.2) and the local settings'
     * limits. Does not validate: {@link IftNegotiation#validate} does that first.
     */
    public static IftParameters of(IftRole role, IftAdaptionIndication local, IftAdaptionIndication peer,
                                   IftSettings settings) {
        return new IftParameters(role, local, peer, settings);
    }

    /**
     * MULPDU: {@link IftSettings#maxUlpdu()}, or, when we grant speculative placement, a frame per TCP
     * segment: {@code EMSS - 6 - 4*HC - 4*PC}, never below 128.
     */
    static int mulpdu(IftSettings s, IftAdaptionIndication local) {
        if (!local.permitsSpeculativePlacement()) {
            return s.maxUlpdu();
        }
        int aligned = s.emss() - IftFramer.PREFIX_LENGTH - (local.sendsHeaderCrc() ? IftFramer.CRC_LENGTH : 0)
                - (local.sendsPayloadCrc() ? IftFramer.CRC_LENGTH : 0);
        return Math.min(s.maxUlpdu(), Math.max(IftSettings.MIN_ULPDU, aligned));
    }

    public IftRole role() {
        return role;
    }

    /** RDMA mode (both R set) or DDP mode (both clear). */
    public IftMode mode() {
        return local.rdmaMode() ? IftMode.RDMA : IftMode.DDP;
    }

    /** The indication we sent. */
    public IftAdaptionIndication localIndication() {
        return local;
    }

    /** The indication the peer sent (its version, BC version, marker interval, reserved bits). */
    public IftAdaptionIndication peerIndication() {
        return peer;
    }

    /** The IFT version spoken: 1. */
    public int version() {
        return IftAdaptionIndication.VERSION;
    }

    /** Our VTag: every frame we receive must carry it. */
    public int localVTag() {
        return local.senderVTag();
    }

    /** The peer's VTag: every frame we send carries it. */
    public int peerVTag() {
        return peer.senderVTag();
    }

    /** Our frames carry a header CRC (our HC). */
    public boolean txHeaderCrc() {
        return local.sendsHeaderCrc();
    }

    /** Our frames carry a payload CRC (our PC). */
    public boolean txPayloadCrc() {
        return local.sendsPayloadCrc();
    }

    /** Received frames carry a header CRC field (the peer's HC); it is always consumed. */
    public boolean rxHeaderCrcPresent() {
        return peer.sendsHeaderCrc();
    }

    /** Received frames carry a payload CRC field (the peer's PC); it is always consumed. */
    public boolean rxPayloadCrcPresent() {
        return peer.sendsPayloadCrc();
    }

    /** We check the received header CRC: the peer's HC and not our IH. */
    public boolean rxHeaderCrcChecked() {
        return peer.sendsHeaderCrc() && !local.ignoresHeaderCrc();
    }

    /** We check the received payload CRC: the peer's PC and not our IP. */
    public boolean rxPayloadCrcChecked() {
        return peer.sendsPayloadCrc() && !local.ignoresPayloadCrc();
    }

    /** The peer checks our header CRC: our HC and not its IH (informational). */
    public boolean peerChecksHeaderCrc() {
        return local.sendsHeaderCrc() && !peer.ignoresHeaderCrc();
    }

    /** The peer checks our payload CRC: our PC and not its IP (informational). */
    public boolean peerChecksPayloadCrc() {
        return local.sendsPayloadCrc() && !peer.ignoresPayloadCrc();
    }

    /** The peer's SP: we may place its data speculatively (this stack never does; IFT draft §8). */
    public boolean mayPlaceSpeculatively() {
        return peer.permitsSpeculativePlacement();
    }

    /** Our SP: the peer may place our data speculatively (MULPDU is then EMSS-aligned). */
    public boolean peerMayPlaceSpeculatively() {
        return local.permitsSpeculativePlacement();
    }

    /** Markers in what we send: our SM and the peer's RM. Never true: we send SM=0 (markers are "TBD"). */
    public boolean markersTx() {
        return local.willSendMarkers() && peer.wantsMarkers();
    }

    /** Markers in what we receive: our RM and the peer's SM. Never true: we send RM=0. */
    public boolean markersRx() {
        return local.wantsMarkers() && peer.willSendMarkers();
    }

    /** Largest ULPDU (DDP header + payload) DDP may hand the framer. */
    public int mulpdu() {
        return mulpdu;
    }

    /** Largest header_size accepted from the peer. */
    public int maxHeaderSize() {
        return maxHeaderSize;
    }

    /** Largest payload_size accepted from the peer. */
    public int maxPayloadSize() {
        return maxPayloadSize;
    }

    /** DDP and RDMAP version to use over IFT (IFT itself does not negotiate it): 1 unless configured 0. */
    public int ddpVersion() {
        return ddpVersion;
    }

    /** DDP header length from its first octet, for header_size (outbound) and the F5 check (inbound). */
    public IftHeaderLength headerLength() {
        return headerLength;
    }

    @Override
    public String toString() {
        return String.format("IFT %s, %s mode, VTag local 0x%04X peer 0x%04X, tx CRC header %s payload %s,"
                        + " rx CRC header %s payload %s, SP to peer %s, MULPDU %d",
                role == IftRole.NODE_A ? "node A" : "node B", mode(), localVTag(), peerVTag(),
                onOff(txHeaderCrc()), onOff(txPayloadCrc()), rx(rxHeaderCrcPresent(), rxHeaderCrcChecked()),
                rx(rxPayloadCrcPresent(), rxPayloadCrcChecked()), onOff(peerMayPlaceSpeculatively()), mulpdu);
    }

    private static String onOff(boolean b) {
        return b ? "on" : "off";
    }

    private static String rx(boolean present, boolean checked) {
        return !present ? "off" : checked ? "checked" : "ignored";
    }
}
