package dev.iwarp.ift;

/**
 * The pure decisions of the adaption: which indication we send, and whether the peer's is acceptable.
 * No I/O; {@link IftAdaptionHandler} calls these.
 */
public final class IftNegotiation {
    private IftNegotiation() {
    }

    /**
     * The indication this endpoint sends (IFT draft §4.2): PH for the role, R from the mode, HC/PC from
     * the send settings (node B leaves out a CRC node A declared it ignores, when
     * {@link IftSettings#omitCrcsPeerIgnores()}), IH/IP from the check settings, SP as configured,
     * SM=RM=0 and marker interval 0 (markers are "TBD", draft §9), version and BC version 1, reserved
     * octets zero.
     *
     * @param peerPhase0 node B: node A's validated phase 0; node A: {@code null}
     */
    public static IftAdaptionIndication localIndication(IftRole role, IftSettings s, int vTag,
                                                        IftAdaptionIndication peerPhase0) {
        boolean omit = role == IftRole.NODE_B && peerPhase0 != null && s.omitCrcsPeerIgnores();
        boolean hc = s.sendHeaderCrc() && !(omit && peerPhase0.ignoresHeaderCrc());
        boolean pc = s.sendPayloadCrc() && !(omit && peerPhase0.ignoresPayloadCrc());
        return IftAdaptionIndication.builder()
                .flag(IftFlag.PH, role == IftRole.NODE_B)
                .flag(IftFlag.R, s.mode() == IftMode.RDMA)
                .flag(IftFlag.HC, hc)
                .flag(IftFlag.PC, pc)
                .flag(IftFlag.IH, !s.checkHeaderCrc())
                .flag(IftFlag.IP, !s.checkPayloadCrc())
                .flag(IftFlag.SP, s.grantSpeculativePlacement())
                .senderVTag(vTag & 0xFFFF)
                .build();
    }

    /**
     * Steps 4-8 of the validation of a received indication (steps 2-3, magic and CRC, are
     * {@link IftAdaptionIndication#decode}'s): version fields, phase, BC version, mode, CRC policy.
     *
     * @param role  our role
     * @param peer  the indication received
     * @param local the indication we send (node B: built from the peer's phase 0 first)
     * @throws IftAdaptionException A4, A5 (malformed), A3, A6, A7, A8 (well formed but unacceptable)
     */
    public static void validate(IftRole role, IftAdaptionIndication peer, IftAdaptionIndication local, IftSettings s) {
        if (peer.version() == 0 || peer.bcVersion() == 0) {
            throw new IftAdaptionException(IftError.MALFORMED_VERSION, "peer sent version " + peer.version()
                    + ", BC version " + peer.bcVersion() + " (0 does not exist; IFT draft §4.2)");
        }
        if (peer.phase() != role.expectsPhase()) {
            throw new IftAdaptionException(IftError.WRONG_PHASE, role == IftRole.NODE_A
                    ? "node A received a phase 0 indication: both ends act as node A"
                    : "node B received a phase 1 indication although it sent no phase 1 yet");
        }
        if (peer.bcVersion() > IftAdaptionIndication.VERSION) {
            // IFT draft §4.2: a BC version above ours MUST be rejected as incompatible
            throw new IftAdaptionException(IftError.INCOMPATIBLE_VERSION, "peer sent version " + peer.version()
                    + ", BC version " + peer.bcVersion() + "; we speak version " + IftAdaptionIndication.VERSION);
        }
        if (peer.rdmaMode() != local.rdmaMode()) {
            // IFT draft §4.2 R: ends that disagree MUST close in error
            throw new IftAdaptionException(IftError.MODE_MISMATCH, "peer asks for " + mode(peer) + " mode, we for "
                    + mode(local) + " mode");
        }
        if (s.requirePeerHeaderCrc() && !peer.sendsHeaderCrc() || s.requirePeerPayloadCrc() && !peer.sendsPayloadCrc()) {
            // IFT draft §4.2 HC, PC: an unacceptable choice SHOULD abort the connection
            throw new IftAdaptionException(IftError.CRC_CHOICE_UNACCEPTABLE, "peer will send header CRC "
                    + yesNo(peer.sendsHeaderCrc()) + ", payload CRC " + yesNo(peer.sendsPayloadCrc())
                    + "; we require header CRC " + yesNo(s.requirePeerHeaderCrc()) + ", payload CRC "
                    + yesNo(s.requirePeerPayloadCrc()));
        }
        if (s.requirePeerChecksOurCrcs() && (local.sendsHeaderCrc() && peer.ignoresHeaderCrc()
                || local.sendsPayloadCrc() && peer.ignoresPayloadCrc())) {
            // IFT draft §4.2 IH, IP: unacceptable → the connection should be closed (in error)
            throw new IftAdaptionException(IftError.CRC_CHECKING_UNACCEPTABLE, "peer ignores "
                    + (local.sendsHeaderCrc() && peer.ignoresHeaderCrc() ? "the header CRC" : "the payload CRC")
                    + " we send, and we require it to check our CRCs");
        }
    }

    private static String mode(IftAdaptionIndication i) {
        return i.rdmaMode() ? "RDMA (R=1)" : "DDP (R=0)";
    }

    private static String yesNo(boolean b) {
        return b ? "yes" : "no";
    }
}
