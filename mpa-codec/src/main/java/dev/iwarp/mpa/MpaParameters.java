package dev.iwarp.mpa;

import java.util.Objects;

/**
 * The outcome of a successful MPA startup: everything the layers above need, immutable. Carried by
 * {@link MpaStartupCompletionEvent} and the startup future, with the Request and Reply as exchanged.
 * What a connection keeps for its lifetime is {@link #withoutStartupFrames()}: the negotiated values
 * only, so that an idle connection does not hold both startup frames and their private data.
 */
public final class MpaParameters {
    private final MpaRole role;
    private final int revision;
    private final boolean crc;
    private final boolean markersTx;
    private final boolean markersRx;
    private final MpaStartupFrame request;
    private final MpaStartupFrame reply;
    private final int ird;
    private final int ord;
    private final RtrType rtrType;
    private final int mulpdu;
    private final int maxUlpduLength;
    private final boolean holdTxUntilFirstFpdu;
    private final boolean enhanced;
    private final int peerIrd;
    private final int peerOrd;

    MpaParameters(MpaRole role, int revision, boolean crc, boolean markersTx, boolean markersRx,
                  MpaStartupFrame request, MpaStartupFrame reply, int ird, int ord, RtrType rtrType,
                  int mulpdu, int maxUlpduLength, boolean holdTxUntilFirstFpdu) {
        this.role = Objects.requireNonNull(role);
        this.revision = revision;
        this.crc = crc;
        this.markersTx = markersTx;
        this.markersRx = markersRx;
        this.request = Objects.requireNonNull(request);
        this.reply = Objects.requireNonNull(reply);
        this.ird = ird;
        this.ord = ord;
        this.rtrType = rtrType;
        this.mulpdu = mulpdu;
        this.maxUlpduLength = maxUlpduLength;
        this.holdTxUntilFirstFpdu = holdTxUntilFirstFpdu;
        this.enhanced = request.irdOrd() != null && reply.irdOrd() != null;
        MpaIrdOrd w = (role == MpaRole.INITIATOR ? reply : request).irdOrd();
        this.peerIrd = w == null ? -1 : w.ird();
        this.peerOrd = w == null ? -1 : w.ord();
    }

    private MpaParameters(MpaParameters p) {
        this.role = p.role;
        this.revision = p.revision;
        this.crc = p.crc;
        this.markersTx = p.markersTx;
        this.markersRx = p.markersRx;
        this.request = null;
        this.reply = null;
        this.ird = p.ird;
        this.ord = p.ord;
        this.rtrType = p.rtrType;
        this.mulpdu = p.mulpdu;
        this.maxUlpduLength = p.maxUlpduLength;
        this.holdTxUntilFirstFpdu = p.holdTxUntilFirstFpdu;
        this.enhanced = p.enhanced;
        this.peerIrd = p.peerIrd;
        this.peerOrd = p.peerOrd;
    }

    /**
     * These parameters without the startup frames (every other value kept): what a connection holds once
     * the framer took over. Its {@link #request()}, {@link #reply()}, {@link #peerFrame()},
     * {@link #localFrame()} and {@link #peerPrivateData()} throw {@link IllegalStateException}.
     */
    public MpaParameters withoutStartupFrames() {
        return request == null ? this : new MpaParameters(this);
    }

    /** Whether the Request and Reply are still here (see {@link #withoutStartupFrames()}). */
    public boolean hasStartupFrames() {
        return request != null;
    }

    private MpaStartupFrame frame(MpaStartupFrame f) {
        if (f == null) {
            throw new IllegalStateException("the startup frames are not kept once the framer took over: read them "
                    + "from the startup completion event or future");
        }
        return f;
    }

    /** Our role in the startup: Initiator (sent the Request) or Responder. */
    public MpaRole role() {
        return role;
    }

    /** The MPA revision in force (the Reply's Rev). */
    public int revision() {
        return revision;
    }

    /** DDP and RDMAP version that goes with the revision: 0 for Rev 0 (RDMAC), else 1 (RFC 5044 App. C). */
    public int ddpVersion() {
        return revision == 0 ? 0 : 1;
    }

    /** CRCs generated and checked in both directions (RFC 5044 §7.1.1: either C bit set). */
    public boolean crc() {
        return crc;
    }

    /** We insert markers in what we send (the peer's frame had M=1). */
    public boolean markersTx() {
        return markersTx;
    }

    /** The peer inserts markers in what it sends (our frame had M=1). */
    public boolean markersRx() {
        return markersRx;
    }

    /** The MPA Request of this connection's startup, as sent or received. */
    public MpaStartupFrame request() {
        return frame(request);
    }

    /** The MPA Reply of this connection's startup, as sent or received. */
    public MpaStartupFrame reply() {
        return frame(reply);
    }

    /** The frame the peer sent. */
    public MpaStartupFrame peerFrame() {
        return frame(role == MpaRole.INITIATOR ? reply : request);
    }

    /** The frame we sent. */
    public MpaStartupFrame localFrame() {
        return frame(role == MpaRole.INITIATOR ? request : reply);
    }

    /** The peer's ULP Private Data (after any IRD/ORD words). A copy. */
    public byte[] peerPrivateData() {
        return peerFrame().ulpPrivateData();
    }

    /** Whether the RFC 6581 IRD/ORD words were exchanged. */
    public boolean enhanced() {
        return enhanced;
    }

    /** Our final Inbound RDMA Read queue Depth: Read Requests we must accept outstanding. */
    public int ird() {
        return ird;
    }

    /** Our final Outbound RDMA Read queue Depth: Read Requests we may have outstanding. */
    public int ord() {
        return ord;
    }

    /** The peer's IRD from its frame, or -1 without RFC 6581 words. */
    public int peerIrd() {
        return peerIrd;
    }

    /** The peer's ORD from its frame, or -1 without RFC 6581 words. */
    public int peerOrd() {
        return peerOrd;
    }

    /** RFC 6581 peer-to-peer model in force. */
    public boolean peerToPeer() {
        return rtrType != null;
    }

    /**
     * The RTR type chosen in the Reply, or {@code null} in the client-server model. The Initiator's
     * RDMAP sends it as its first message; the Responder's RDMAP consumes it invisibly.
     */
    public RtrType rtrType() {
        return rtrType;
    }

    /** Maximum ULPDU our DDP may hand the framer (RFC 5044 §4.5), within 128..64768. */
    public int mulpdu() {
        return mulpdu;
    }

    /** Largest ULPDU_Length accepted from the peer. */
    public int maxUlpduLength() {
        return maxUlpduLength;
    }

    /** Responder holds its FPDUs until one valid FPDU arrived (RFC 5044 §7.1.2 rule 4). */
    public boolean holdTxUntilFirstFpdu() {
        return holdTxUntilFirstFpdu;
    }

    @Override
    public String toString() {
        return "MPA " + role.name().toLowerCase() + " Rev " + revision + ", CRC " + (crc ? "on" : "off")
                + ", markers tx " + (markersTx ? "on" : "off") + " rx " + (markersRx ? "on" : "off")
                + ", IRD " + ird + " ORD " + ord + (rtrType != null ? ", P2P RTR " + rtrType : "")
                + ", MULPDU " + mulpdu;
    }
}
