package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * An MPA Request or Reply frame (RFC 5044 §7.1.1; draft-ietf-rddp-mpa-01 §6.1.1 for Rev 0; RFC 6581
 * for the enhanced flag and the IRD/ORD words):
 *
 * <pre>
 *  0..15  Key "MPA ID Req Frame" / "MPA ID Rep Frame"
 *  16     |M|C|R| Res (5 bits; 0x10 = RFC 6581 enhanced) |
 *  17     Rev
 *  18..19 PD_Length (big-endian)
 *  20..   Private Data (PD_Length octets; with Rev 2 + enhanced, the first 4 are the IRD/ORD words)
 * </pre>
 *
 * Immutable. The codec part ({@link #encode}, {@link #decode}) checks only what the frame format
 * itself defines (key, PD_Length against the limit, presence of the IRD/ORD words); whether a
 * revision or flag combination is acceptable is decided by {@link MpaStartupHandler}.
 */
public final class MpaStartupFrame {

    /** Request or Reply, told apart by the key (they differ in octet 10 only). */
    public enum Type {
        REQUEST("MPA ID Req Frame"),
        REPLY("MPA ID Rep Frame");

        private final byte[] key;

        Type(String key) {
            this.key = key.getBytes(StandardCharsets.US_ASCII);
        }

        /** The 16 key octets. */
        public byte[] key() {
            return key.clone();
        }
    }

    /** Octets before Private Data. */
    public static final int HEADER_LENGTH = 20;
    /** Private Data limit of RFC 5044 §7.1.1 (the 2004 draft allowed 65535). */
    public static final int MAX_PRIVATE_DATA = 512;

    static final int KEY_LENGTH = 16;
    static final int FLAG_M = 0x80;
    static final int FLAG_C = 0x40;
    static final int FLAG_R = 0x20;
    static final int RES_MASK = 0x1F;
    /** RFC 6581 enhanced RDMA connection establishment flag (most significant Res bit). */
    static final int FLAG_ENHANCED = 0x10;

    private static final byte[] EMPTY = new byte[0];

    private final Type type;
    private final boolean markers;
    private final boolean crc;
    private final boolean rejected;
    private final int reserved;
    private final int revision;
    private final MpaIrdOrd irdOrd;
    private final byte[] ulpPrivateData;

    private MpaStartupFrame(Type type, boolean markers, boolean crc, boolean rejected, int reserved, int revision,
                            MpaIrdOrd irdOrd, byte[] ulpPrivateData) {
        this.type = type;
        this.markers = markers;
        this.crc = crc;
        this.rejected = rejected;
        this.reserved = reserved;
        this.revision = revision;
        this.irdOrd = irdOrd;
        this.ulpPrivateData = ulpPrivateData;
    }

    /** A builder for a frame of the given type (M=0, C=0, R=0, Res 0, Rev 1, no private data). */
    public static Builder builder(Type type) {
        return new Builder(type);
    }

    public Type type() {
        return type;
    }

    /** M bit: the sender wants to receive markers (RFC 5044 §7.1.1: per direction). */
    public boolean markers() {
        return markers;
    }

    /** C bit: the sender's CRC preference (RFC 5044 §7.1.1). */
    public boolean crc() {
        return crc;
    }

    /** R bit: in a Reply, the Responder rejects the connection. */
    public boolean rejected() {
        return rejected;
    }

    /** The five Res bits as received or to be sent (0x10 is RFC 6581's enhanced flag). */
    public int reserved() {
        return reserved;
    }

    /** RFC 6581 enhanced connection establishment flag (Res bit 0x10). */
    public boolean enhanced() {
        return (reserved & FLAG_ENHANCED) != 0;
    }

    /** Rev octet: 0 = 2004 draft / RDMAC, 1 = RFC 5044, 2 = RFC 6581. */
    public int revision() {
        return revision;
    }

    /** The RFC 6581 IRD/ORD words, or {@code null} when the frame does not carry them. */
    public MpaIrdOrd irdOrd() {
        return irdOrd;
    }

    /** The ULP's part of Private Data (after the IRD/ORD words, if any). A copy. */
    public byte[] ulpPrivateData() {
        return ulpPrivateData.clone();
    }

    /** The PD_Length field: ULP private data plus 4 when the IRD/ORD words are present. */
    public int privateDataLength() {
        return ulpPrivateData.length + (irdOrd != null ? MpaIrdOrd.LENGTH : 0);
    }

    /** Octets this frame occupies on the wire. */
    public int encodedLength() {
        return HEADER_LENGTH + privateDataLength();
    }

    /** Writes the frame at the writer index. */
    public void encode(ByteBuf out) {
        out.writeBytes(type.key);
        out.writeByte((markers ? FLAG_M : 0) | (crc ? FLAG_C : 0) | (rejected ? FLAG_R : 0) | reserved);
        out.writeByte(revision);
        out.writeShort(privateDataLength());
        if (irdOrd != null) {
            irdOrd.encode(out);
        }
        out.writeBytes(ulpPrivateData);
    }

    /**
     * Returns the total length of the frame that starts at the reader index, or -1 when fewer than
     * {@link #HEADER_LENGTH} octets are readable. Validates the key and PD_Length as soon as the header
     * is complete, so a bad frame is reported without waiting for its Private Data.
     *
     * @throws MpaException code 4 when the key is neither Request nor Reply, or PD_Length exceeds the limit
     */
    public static int frameLength(ByteBuf in, int privateDataLimit) {
        if (in.readableBytes() < HEADER_LENGTH) {
            return -1;
        }
        int start = in.readerIndex();
        typeOf(in, start);
        int pdLength = in.getUnsignedShort(start + 18);
        if (pdLength > privateDataLimit) {
            // RFC 5044 §7.1.1 (PD_Length <= 512) and §7.1.2 rule 9
            throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME,
                    "PD_Length " + pdLength + " exceeds the limit of " + privateDataLimit + " octets");
        }
        return HEADER_LENGTH + pdLength;
    }

    /**
     * Decodes a whole frame at the reader index and advances past it; returns {@code null} (consuming
     * nothing) while the frame is incomplete.
     *
     * @throws MpaException code 4 for an improperly formatted frame
     */
    public static MpaStartupFrame decode(ByteBuf in, int privateDataLimit) {
        int length = frameLength(in, privateDataLimit);
        if (length < 0 || in.readableBytes() < length) {
            return null;
        }
        int start = in.readerIndex();
        Type type = typeOf(in, start);
        int flags = in.getUnsignedByte(start + 16);
        int revision = in.getUnsignedByte(start + 17);
        int pdLength = length - HEADER_LENGTH;
        MpaIrdOrd irdOrd = null;
        int ulpStart = start + HEADER_LENGTH;
        if (revision == 2 && (flags & FLAG_ENHANCED) != 0) {
            if (pdLength < MpaIrdOrd.LENGTH) {
                // RFC 6581: an enhanced Rev 2 frame carries the IRD/ORD words in its Private Data
                throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME,
                        "enhanced Rev 2 frame with PD_Length " + pdLength + " < 4 (no room for IRD/ORD)");
            }
            irdOrd = MpaIrdOrd.decode(in, ulpStart);
            ulpStart += MpaIrdOrd.LENGTH;
        }
        byte[] ulp = new byte[start + length - ulpStart];
        in.getBytes(ulpStart, ulp);
        in.skipBytes(length);
        return new MpaStartupFrame(type, (flags & FLAG_M) != 0, (flags & FLAG_C) != 0, (flags & FLAG_R) != 0,
                flags & RES_MASK, revision, irdOrd, ulp);
    }

    /**
     * Which startup frame the readable octets begin with, by its key (RFC 5044 §7.1.1), or {@code null} when they
     * do not begin with an MPA key (or fewer than 16 octets are readable). Reads nothing: for telling an MPA peer
     * from another framing's by its first octets.
     */
    public static Type keyAt(ByteBuf in) {
        if (in.readableBytes() < KEY_LENGTH) {
            return null;
        }
        int start = in.readerIndex();
        return matchesKey(in, start, Type.REQUEST.key) ? Type.REQUEST
                : matchesKey(in, start, Type.REPLY.key) ? Type.REPLY : null;
    }

    /**
     * Whether the readable octets, however few, agree with the start of {@code type}'s key: a peer that has
     * sent only part of its first frame may still be sending that startup frame. Reads nothing.
     */
    public static boolean mayBeKey(ByteBuf in, Type type) {
        int n = Math.min(KEY_LENGTH, in.readableBytes());
        int start = in.readerIndex();
        for (int i = 0; i < n; i++) {
            if (in.getByte(start + i) != type.key[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * The Reply that refuses the Request whose header (at least {@link #HEADER_LENGTH} octets) is readable,
     * in that Request's own terms, so that its sender fails at once with the reason: R=1 (RFC 5044 §7.1.5)
     * in the Request's Rev (Rev 1 for a Rev this side does not know), the RFC 6581 §5 IRD/ORD words (zero)
     * when the Request is an enhanced Rev 2 one, and {@code privateData} as the ULP's private data.
     * Reads nothing.
     */
    public static MpaStartupFrame refusalOf(ByteBuf request, byte[] privateData) {
        if (keyAt(request) != Type.REQUEST || request.readableBytes() < HEADER_LENGTH) {
            throw new IllegalArgumentException("no MPA Request header readable");
        }
        int start = request.readerIndex();
        int revision = request.getUnsignedByte(start + KEY_LENGTH + 1);
        boolean enhanced = revision == 2 && (request.getUnsignedByte(start + KEY_LENGTH) & FLAG_ENHANCED) != 0;
        Builder b = builder(Type.REPLY).rejected(true).revision(revision <= 2 ? revision : 1)
                .ulpPrivateData(privateData);
        if (enhanced) {
            b.reserved(FLAG_ENHANCED).irdOrd(MpaIrdOrd.of(0, 0));
        }
        return b.build();
    }

    private static Type typeOf(ByteBuf in, int start) {
        if (matchesKey(in, start, Type.REQUEST.key)) {
            return Type.REQUEST;
        }
        if (matchesKey(in, start, Type.REPLY.key)) {
            return Type.REPLY;
        }
        // RFC 5044 §7.1.2 rule 5
        throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME,
                "key is not an MPA key: " + ByteBufUtil.hexDump(in, start, KEY_LENGTH) + " (\""
                        + printable(in, start, KEY_LENGTH) + "\")");
    }

    private static boolean matchesKey(ByteBuf in, int start, byte[] key) {
        for (int i = 0; i < KEY_LENGTH; i++) {
            if (in.getByte(start + i) != key[i]) {
                return false;
            }
        }
        return true;
    }

    private static String printable(ByteBuf in, int start, int len) {
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            int b = in.getUnsignedByte(start + i);
            sb.append(b >= 0x20 && b < 0x7F ? (char) b : '.');
        }
        return sb.toString();
    }

    /** Returns a builder initialised with this frame's fields. */
    public Builder toBuilder() {
        return new Builder(type).markers(markers).crc(crc).rejected(rejected).reserved(reserved)
                .revision(revision).irdOrd(irdOrd).ulpPrivateData(ulpPrivateData);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof MpaStartupFrame)) {
            return false;
        }
        MpaStartupFrame f = (MpaStartupFrame) o;
        return type == f.type && markers == f.markers && crc == f.crc && rejected == f.rejected
                && reserved == f.reserved && revision == f.revision && Objects.equals(irdOrd, f.irdOrd)
                && Arrays.equals(ulpPrivateData, f.ulpPrivateData);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, markers, crc, rejected, reserved, revision, irdOrd)
                + 31 * Arrays.hashCode(ulpPrivateData);
    }

    @Override
    public String toString() {
        return "MPA " + (type == Type.REQUEST ? "Request" : "Reply") + "{Rev " + revision
                + (markers ? " M" : "") + (crc ? " C" : "") + (rejected ? " R" : "")
                + (reserved != 0 ? String.format(" Res=0x%02x", reserved) : "")
                + (irdOrd != null ? " " + irdOrd : "") + " PD_Length " + privateDataLength() + "}";
    }

    /** Builds frames; validates field ranges, not protocol choices. */
    public static final class Builder {
        private final Type type;
        private boolean markers;
        private boolean crc;
        private boolean rejected;
        private int reserved;
        private int revision = 1;
        private MpaIrdOrd irdOrd;
        private byte[] ulpPrivateData = EMPTY;

        private Builder(Type type) {
            this.type = Objects.requireNonNull(type, "type");
        }

        public Builder markers(boolean markers) {
            this.markers = markers;
            return this;
        }

        public Builder crc(boolean crc) {
            this.crc = crc;
            return this;
        }

        public Builder rejected(boolean rejected) {
            this.rejected = rejected;
            return this;
        }

        /** Res bits (0..0x1F). Prefer {@link #irdOrd} for RFC 6581, which sets the enhanced flag. */
        public Builder reserved(int reserved) {
            if ((reserved & ~RES_MASK) != 0) {
                throw new IllegalArgumentException("Res is 5 bits: " + reserved);
            }
            this.reserved = reserved;
            return this;
        }

        public Builder revision(int revision) {
            if (revision < 0 || revision > 255) {
                throw new IllegalArgumentException("Rev is one octet: " + revision);
            }
            this.revision = revision;
            return this;
        }

        /**
         * RFC 6581 IRD/ORD words; non-null also sets the enhanced flag. They are encoded only with
         * Rev 2, as RFC 6581 defines them.
         */
        public Builder irdOrd(MpaIrdOrd irdOrd) {
            this.irdOrd = irdOrd;
            if (irdOrd != null) {
                reserved |= FLAG_ENHANCED;
            }
            return this;
        }

        public Builder ulpPrivateData(byte[] data) {
            this.ulpPrivateData = data == null ? EMPTY : data.clone();
            return this;
        }

        public MpaStartupFrame build() {
            if (irdOrd != null && revision != 2) {
                throw new IllegalStateException("IRD/ORD words exist only in Rev 2 frames (RFC 6581)");
            }
            if (revision == 2 && (reserved & FLAG_ENHANCED) != 0 && irdOrd == null) {
                throw new IllegalStateException("an enhanced Rev 2 frame must carry the IRD/ORD words");
            }
            int pd = ulpPrivateData.length + (irdOrd != null ? MpaIrdOrd.LENGTH : 0);
            if (pd > 0xFFFF) {
                throw new IllegalStateException("PD_Length is 16 bits: " + pd);
            }
            return new MpaStartupFrame(type, markers, crc, rejected, reserved, revision, irdOrd, ulpPrivateData);
        }
    }
}
