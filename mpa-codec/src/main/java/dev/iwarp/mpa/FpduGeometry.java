package dev.iwarp.mpa;

import static dev.iwarp.mpa.MpaFramer.CRC_LENGTH;
import static dev.iwarp.mpa.MpaFramer.LENGTH_FIELD;
import static dev.iwarp.mpa.MpaFramer.MARKER_INTERVAL;
import static dev.iwarp.mpa.MpaFramer.MARKER_LENGTH;

/** Where FPDUs fall on the wire (RFC 5044 §4.3, §4.5): their length with markers, and MULPDU for an EMSS. */
final class FpduGeometry {
    private FpduGeometry() {
    }

    /**
     * Octets an FPDU occupies on the wire when it starts {@code streamPos} octets after SeqStart:
     * length field, ULPDU, pad, the markers that fall inside it (including a leading one and one right
     * after the pad, RFC 5044 §4.3), and the CRC.
     */
    static int wireLength(int streamPos, int ulpduLength, boolean markers) {
        int body = LENGTH_FIELD + ulpduLength;
        body += (-body) & 3;
        if (!markers) {
            return body + CRC_LENGTH;
        }
        int off = 0;
        int left = body;
        while (left > 0) {
            if (((streamPos + off) & (MARKER_INTERVAL - 1)) == 0) {
                off += MARKER_LENGTH;
            }
            int n = Math.min(left, MARKER_INTERVAL - ((streamPos + off) & (MARKER_INTERVAL - 1)));
            off += n;
            left -= n;
        }
        if (((streamPos + off) & (MARKER_INTERVAL - 1)) == 0) {
            off += MARKER_LENGTH; // a marker right after the PAD belongs to this FPDU (RFC 5044 §4.3)
        }
        return off + CRC_LENGTH;
    }

    /**
     * MULPDU for an EMSS (RFC 5044 §4.5), clamped to 128..64768:
     * {@code EMSS - (6 + (EMSS mod 4))}, with markers {@code EMSS - (6 + 4 * ceil(EMSS / 512) + (EMSS mod 4))}.
     */
    static int mulpdu(int emss, boolean markers) {
        int m = emss - (6 + (emss % 4));
        if (markers) {
            m -= MARKER_LENGTH * ((emss + MARKER_INTERVAL - 1) / MARKER_INTERVAL);
        }
        return Math.max(MpaSettings.MIN_MULPDU, Math.min(MpaSettings.MAX_SEND_ULPDU, m));
    }
}
