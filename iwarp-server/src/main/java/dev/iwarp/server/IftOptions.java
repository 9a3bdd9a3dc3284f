package dev.iwarp.server;

import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.ift.IftSettings;
import picocli.CommandLine.Option;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The IFT options of {@code --wire ift} (draft-williams-iwarp-ift-01), shared by serve, ping, bench,
 * demo, probe and sendrecv through {@link WireOptions}. Each is {@code null} unless given, so another
 * wire can refuse them. The node role is not an option: the connecting side is node A and serve node B.
 */
final class IftOptions {
    @Option(names = "--ift-send-crc", paramLabel = "CRCS",
            description = "IFT: CRCs we put in every frame (our HC and PC): header,payload, header, payload or none "
                    + "(default: header,payload).")
    String sendCrc;

    @Option(names = "--ift-check-crc", paramLabel = "CRCS",
            description = "IFT: received CRCs we check; the others we announce as ignored (IH, IP): header,payload, "
                    + "header, payload or none (default: header,payload).")
    String checkCrc;

    @Option(names = "--ift-require-crc", paramLabel = "CRCS",
            description = "IFT: CRCs the peer must send, or we refuse it: header,payload, header, payload or none "
                    + "(default: none).")
    String requireCrc;

    @Option(names = "--ift-require-checked",
            description = "IFT: refuse a peer that announces it ignores a CRC we send.")
    Boolean requireChecked;

    @Option(names = "--ift-vtag", paramLabel = "random|N",
            description = "IFT: our VTag: random (a fresh one per connection from a secure random source) or a "
                    + "fixed 0..65535, for reproducible captures (default: random).")
    String vTag;

    /** Whether any IFT option was given. */
    boolean given() {
        return sendCrc != null || checkCrc != null || requireCrc != null || requireChecked != null || vTag != null;
    }

    /** The IFT settings these options mean, with this adaption timeout; a bad value is one line. */
    IftSettings settings(long adaptionTimeoutMs) {
        boolean[] send = crcs("--ift-send-crc", sendCrc, true);
        boolean[] check = crcs("--ift-check-crc", checkCrc, true);
        boolean[] require = crcs("--ift-require-crc", requireCrc, false);
        IftSettings.Builder b = IftSettings.builder().sendCrcs(send[0], send[1]).checkCrcs(check[0], check[1])
                .requirePeerCrcs(require[0], require[1]).requirePeerChecksOurCrcs(Boolean.TRUE.equals(requireChecked))
                .adaptionTimeout(adaptionTimeoutMs, TimeUnit.MILLISECONDS);
        if (vTag != null && !vTag.equalsIgnoreCase("random")) {
            b.vTag(vTag(vTag));
        }
        return b.build();
    }

    /** The framing these options mean: {@link IftFraming} with IRD and ORD. */
    IftFraming framing(long adaptionTimeoutMs, int ird, int ord) {
        if (ird < 0 || ord < 0) {
            throw new IllegalArgumentException("--ird and --ord must be >= 0");
        }
        return IftFraming.of(settings(adaptionTimeoutMs)).irdOrd(ird, ord);
    }

    /** Refuses the IFT options on another wire. */
    void refuseUnlessIft(boolean ift) {
        if (!ift && given()) {
            throw new IllegalArgumentException("--ift-* options are for --wire ift");
        }
    }

    /**
     * Refuses the MPA Initiator options with {@code --wire ift}: IFT has no revisions, markers (never:
     * draft-williams-iwarp-ift-01 frames every PDU itself) or RTR, and its CRCs are chosen per direction with {@code --ift-send-crc}.
     */
    static void refuseMpaOptions(ClientMpaOptions mpa) {
        if (mpa.crc || mpa.markers || mpa.revision != 2 || mpa.p2p != null) {
            throw new IllegalArgumentException("--crc, --markers, --mpa-rev and --p2p are MPA options, not for "
                    + "--wire ift (its CRCs: --ift-send-crc, --ift-check-crc)");
        }
    }

    private static boolean[] crcs(String option, String value, boolean byDefault) {
        if (value == null) {
            return new boolean[] {byDefault, byDefault};
        }
        boolean header = false;
        boolean payload = false;
        for (String part : value.split(",", -1)) {
            switch (part.trim().toLowerCase(Locale.ROOT)) {
                case "header" -> header = true;
                case "payload" -> payload = true;
                case "none" -> {
                    if (!value.trim().equalsIgnoreCase("none")) {
                        throw new IllegalArgumentException(option + ": none cannot be combined: " + value);
                    }
                }
                default -> throw new IllegalArgumentException(option + " must be header,payload, header, payload "
                        + "or none: " + value);
            }
        }
        return new boolean[] {header, payload};
    }

    private static int vTag(String value) {
        try {
            String v = value.trim().toLowerCase(Locale.ROOT);
            int t = v.startsWith("0x") ? Integer.parseInt(v.substring(2), 16) : Integer.parseInt(v);
            if (t >= 0 && t <= 0xFFFF) {
                return t;
            }
        } catch (NumberFormatException e) {
            // the message below
        }
        throw new IllegalArgumentException("--ift-vtag must be random or 0..65535: " + value);
    }
}
