package dev.iwarp.mpa;


import java.io.ByteArrayOutputStream;
import java.util.zip.CRC32C;

/** Helpers shared by the MPA tests. */
final class MpaTestUtil {
    private MpaTestUtil() {
    }

    /**
     * An independent FPDU sender written straight from the marker rules of RFC 5044 §4.3 on plain
     * byte arrays, to cross-check {@link MpaFramer}'s marker placement and CRC coverage.
     */
    static final class ReferenceSender {
        private final boolean markers;
        private final boolean crc;
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private int off;
        private final CRC32C c = new CRC32C();

        ReferenceSender(boolean markers, boolean crc) {
            this.markers = markers;
            this.crc = crc;
        }

        void emit(byte[] ulpdu) {
            int pad = (4 - ((2 + ulpdu.length) % 4)) % 4;
            byte[] body = new byte[2 + ulpdu.length + pad];
            body[0] = (byte) (ulpdu.length >> 8);
            body[1] = (byte) ulpdu.length;
            System.arraycopy(ulpdu, 0, body, 2, ulpdu.length);
            int start = off;
            c.reset();
            int i = 0;
            while (i < body.length) {
                if (markers && off % 512 == 0) {
                    putMarker(off - start);
                }
                int n = markers ? Math.min(body.length - i, 512 - off % 512) : body.length - i;
                out.write(body, i, n);
                c.update(body, i, n);
                i += n;
                off += n;
            }
            if (markers && off % 512 == 0) {
                putMarker(off - start);
            }
            int v = crc ? (int) c.getValue() : 0;
            out.write(v);
            out.write(v >>> 8);
            out.write(v >>> 16);
            out.write(v >>> 24);
            off += 4;
        }

        private void putMarker(int ptr) {
            byte[] m = {0, 0, (byte) (ptr >> 8), (byte) ptr};
            out.write(m, 0, 4);
            c.update(m);
            off += 4;
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }
}
