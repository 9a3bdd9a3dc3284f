package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.ift.IftParameters;
import dev.iwarp.ift.IftRole;
import dev.iwarp.ift.IftSettings;

/**
 * What the tools print about IFT (draft-williams-iwarp-ift-01): the negotiation line, as
 * {@link IwarpWire#describe(dev.iwarp.mpa.MpaParameters)} prints MPA's, and serve's listening line.
 * IFT itself runs through {@link IwarpWire} with an {@link IftFraming}: the same session and client code.
 */
public final class IftWire {
    private IftWire() {
    }

    /**
     * One line for a completed adaption, e.g. {@code IFT node A, CRC out header+payload, in
     * header+payload checked, VTag 0x1A2B peer 0x3C4D, IRD 1 ORD 1, MULPDU 65535}: the CRCs we send
     * (and which of them the peer ignores), the CRCs the peer sends (and which of them we ignore), both
     * VTags, the IRD/ORD agreed outside IFT, and MULPDU.
     */
    public static String describe(IftParameters p, int ird, int ord) {
        String out = crcs(p.txHeaderCrc(), p.txPayloadCrc())
                + ignored(p.txHeaderCrc() && !p.peerChecksHeaderCrc(), p.txPayloadCrc() && !p.peerChecksPayloadCrc(),
                " the peer ignores ");
        String in = crcs(p.rxHeaderCrcPresent(), p.rxPayloadCrcPresent());
        boolean uncheckedH = p.rxHeaderCrcPresent() && !p.rxHeaderCrcChecked();
        boolean uncheckedP = p.rxPayloadCrcPresent() && !p.rxPayloadCrcChecked();
        in += uncheckedH || uncheckedP ? ignored(uncheckedH, uncheckedP, " we ignore ")
                : p.rxHeaderCrcPresent() || p.rxPayloadCrcPresent() ? " checked" : "";
        return String.format("IFT %s, CRC out %s, in %s, VTag 0x%04X peer 0x%04X, IRD %d ORD %d, MULPDU %d%s",
                role(p.role()), out, in, p.localVTag(), p.peerVTag(), ird, ord, p.mulpdu(),
                p.ddpVersion() != 1 ? ", DDP/RDMAP version " + p.ddpVersion() : "");
    }

    /** The short phrase of bench's header: {@code IFT CRC header+payload} (the CRCs we send). */
    public static String summary(IftParameters p) {
        return "IFT CRC " + crcs(p.txHeaderCrc(), p.txPayloadCrc());
    }

    /** Whether we send a CRC (bench's "crc"). */
    public static boolean crc(IftParameters p) {
        return p.txHeaderCrc() || p.txPayloadCrc();
    }

    /** serve's listening settings: {@code IFT node B, CRC out header+payload, checked header+payload, IRD 16 ORD 16}. */
    public static String listening(IftFraming f) {
        IftSettings s = f.settings();
        String required = crcs(s.requirePeerHeaderCrc(), s.requirePeerPayloadCrc());
        return "IFT node B, CRC out " + crcs(s.sendHeaderCrc(), s.sendPayloadCrc()) + ", checked "
                + crcs(s.checkHeaderCrc(), s.checkPayloadCrc())
                + (required.equals("none") ? "" : ", required of the peer " + required)
                + (s.requirePeerChecksOurCrcs() ? ", the peer must check ours" : "")
                + ", IRD " + f.ird() + " ORD " + f.ord();
    }

    static String crcs(boolean header, boolean payload) {
        return header && payload ? "header+payload" : header ? "header" : payload ? "payload" : "none";
    }

    private static String ignored(boolean header, boolean payload, String who) {
        return header || payload ? "," + who + crcs(header, payload) : "";
    }

    private static String role(IftRole r) {
        return r == IftRole.NODE_A ? "node A" : "node B";
    }
}
