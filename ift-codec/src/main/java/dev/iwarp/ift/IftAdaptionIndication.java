package dev.iwarp.ift;

import io.netty.buffer.ByteBuf;

import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The 64-octet adaption indication (IFT draft §4.1, §4.2). Integer fields are big-endian; the CRC is
 * CRC32C over octets 0-59, carried least-significant octet first (as iSCSI's digests and MPA's CRC).
 *
 * <pre>
 *   0..3   magic 0x52444450 ("RDDP")
 *   4..5   version          6..7  BC version
 *   8..11  flags (PH R HC PC IH IP SP SM RM, then 23 reserved bits)
 *  12..13  sender's VTag    14..15 marker interval
 *  16..59  reserved (44 octets, zero when sent, ignored when received)
 *  60..63  CRC32C of octets 0..59
 * </pre>
 *
 * Immutable. {@link #decode} checks only what makes 64 octets an indication at all (magic, CRC);
 * whether its version, phase and flags are acceptable is decided by {@link IftNegotiation}.
 */
public final class IftAdaptionIndication {
    /** Octets of an indication (IFT draft §4.1: "exactly 64 bytes"). */
    public static final int LENGTH = 64;
    /** The magic number, ASCII "RDDP" in network order. */
    public static final int MAGIC = 0x52444450;
    /** The version this implementation speaks (IFT draft §4.2: MUST be 1). */
    public static final int VERSION = 1;
    /** Octets of the reserved area (16..59). */
    public static final int RESERVED_LENGTH = 44;
    /** Octets covered by the indication CRC (0..59). */
    static final int CRC_COVERAGE = 60;
    private static final int RESERVED_OFFSET = 16;

    /** The reserved area as sent and almost always received: shared, since it is never handed out or changed. */
    private static final byte[] ZERO_RESERVED = new byte[RESERVED_LENGTH];

    private final int version;
    private final int bcVersion;
    private final int flags;
    private final int senderVTag;
    private final int markerInterval;
    private final byte[] reserved;

    private IftAdaptionIndication(Builder b) {
        this.version = b.version;
        this.bcVersion = b.bcVersion;
        this.flags = b.flags;
        this.senderVTag = b.senderVTag;
        this.markerInterval = b.markerInterval;
        this.reserved = isZero(b.reserved) ? ZERO_RESERVED : b.reserved.clone();
    }

    private static boolean isZero(byte[] a) {
        for (byte x : a) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether this indication holds an all-zero reserved area of its own rather than the shared one (tests). */
    boolean ownsZeroReservedArea() {
        return reserved != ZERO_RESERVED && !hasNonZeroReservedOctets();
    }

    /** A builder: version 1, BC version 1, no flags, VTag 0, marker interval 0, reserved zero. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this indication's fields. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.version = version;
        b.bcVersion = bcVersion;
        b.flags = flags;
        b.senderVTag = senderVTag;
        b.markerInterval = markerInterval;
        b.reserved = reserved.clone();
        return b;
    }

    /** Version of the sender (16 bits). */
    public int version() {
        return version;
    }

    /** BC version: the oldest version the sender is backward compatible with (16 bits). */
    public int bcVersion() {
        return bcVersion;
    }

    /** The whole 32-bit flag field, reserved bits included. */
    public int flags() {
        return flags;
    }

    /** Whether {@code flag} is set. */
    public boolean has(IftFlag flag) {
        return (flags & flag.mask()) != 0;
    }

    /** 0 or 1 (the PH flag). */
    public int phase() {
        return has(IftFlag.PH) ? 1 : 0;
    }

    /** R: the sender wants RDMA mode (clear: DDP mode). */
    public boolean rdmaMode() {
        return has(IftFlag.R);
    }

    /** HC: the sender's frames carry a header CRC. */
    public boolean sendsHeaderCrc() {
        return has(IftFlag.HC);
    }

    /** PC: the sender's frames carry a payload CRC. */
    public boolean sendsPayloadCrc() {
        return has(IftFlag.PC);
    }

    /** IH: the sender does not check header CRCs it receives. */
    public boolean ignoresHeaderCrc() {
        return has(IftFlag.IH);
    }

    /** IP: the sender does not check payload CRCs it receives. */
    public boolean ignoresPayloadCrc() {
        return has(IftFlag.IP);
    }

    /** SP: the sender permits the receiver to place the sender's data speculatively. */
    public boolean permitsSpeculativePlacement() {
        return has(IftFlag.SP);
    }

    /** SM: the sender is willing to send markers. */
    public boolean willSendMarkers() {
        return has(IftFlag.SM);
    }

    /** RM: the sender wishes to receive markers. */
    public boolean wantsMarkers() {
        return has(IftFlag.RM);
    }

    /** The 23 reserved flag bits as received (0 when we send). */
    public int reservedFlags() {
        return flags & IftFlag.RESERVED_MASK;
    }

    /** The sender's VTag: the value the receiver of this indication puts in every frame it sends. */
    public int senderVTag() {
        return senderVTag;
    }

    /** Marker interval (16 bits; markers are "TBD" in the draft: we send 0 and ignore it). */
    public int markerInterval() {
        return markerInterval;
    }

    /** Octets 16..59. A copy. */
    public byte[] reserved() {
        return reserved.clone();
    }

    /** Whether any reserved octet is non-zero. */
    public boolean hasNonZeroReservedOctets() {
        return !isZero(reserved);
    }

    /** Writes the 64 octets at the writer index, the CRC computed over what was written. */
    public void encode(ByteBuf out) {
        byte[] a = toByteArray();
        out.writeBytes(a);
    }

    /** The 64 octets. */
    public byte[] toByteArray() {
        byte[] a = new byte[LENGTH];
        putInt(a, 0, MAGIC);
        putShort(a, 4, version);
        putShort(a, 6, bcVersion);
        putInt(a, 8, flags);
        putShort(a, 12, senderVTag);
        putShort(a, 14, markerInterval);
        System.arraycopy(reserved, 0, a, RESERVED_OFFSET, RESERVED_LENGTH);
        int crc = crc(a, 0);
        a[60] = (byte) crc; // least-significant octet first, as iSCSI's digests
        a[61] = (byte) (crc >>> 8);
        a[62] = (byte) (crc >>> 16);
        a[63] = (byte) (crc >>> 24);
        return a;
    }

    /** The CRC32C value this indication carries (over octets 0..59). */
    public int crc() {
        return crc(toByteArray(), 0);
    }

    /**
     * Whether the readable octets begin with the magic number "RDDP" (at least 4 readable): an IFT peer's first
     * octets, for telling it from another framing's peer. Reads nothing.
     */
    public static boolean startsWithMagic(ByteBuf in) {
        return in.readableBytes() >= 4 && in.getInt(in.readerIndex()) == MAGIC;
    }

    /**
     * Checks that the readable octets can still start an indication: throws A1 as soon as one of the
     * magic number's octets is wrong, so a peer that does not speak IFT is refused without waiting for
     * 64 octets. Reads nothing.
     */
    public static void checkMagicPrefix(ByteBuf in) {
        int n = Math.min(4, in.readableBytes());
        for (int i = 0; i < n; i++) {
            if (in.getUnsignedByte(in.readerIndex() + i) != ((MAGIC >>> (24 - 8 * i)) & 0xFF)) {
                byte[] got = new byte[n];
                in.getBytes(in.readerIndex(), got);
                throw new IftAdaptionException(IftError.NOT_AN_IFT_PEER,
                        "first octets " + hex(got) + " are not \"RDDP\" (52 44 44 50)");
            }
        }
    }

    /**
     * Reads one indication when 64 octets are readable, else returns {@code null} and reads nothing.
     *
     * @throws IftAdaptionException A1 (magic) or A2 (CRC); the 64 octets are consumed then
     */
    public static IftAdaptionIndication decode(ByteBuf in) {
        checkMagicPrefix(in);
        if (in.readableBytes() < LENGTH) {
            return null;
        }
        byte[] a = new byte[LENGTH];
        in.readBytes(a);
        int computed = crc(a, 0);
        int received = (a[60] & 0xFF) | (a[61] & 0xFF) << 8 | (a[62] & 0xFF) << 16 | (a[63] & 0xFF) << 24;
        if (computed != received) {
            // IFT draft §4.2: the indication CRC is REQUIRED
            throw new IftAdaptionException(IftError.INDICATION_CRC, String.format(
                    "indication carries CRC %s, CRC32C of octets 0-59 is %08x (%s)", hex(Arrays.copyOfRange(a, 60, 64)),
                    computed, Integer.reverseBytes(received) == computed
                            ? "the peer wrote it most-significant octet first" : "octets corrupted"));
        }
        Builder b = new Builder();
        b.version = getShort(a, 4);
        b.bcVersion = getShort(a, 6);
        b.flags = getInt(a, 8);
        b.senderVTag = getShort(a, 12);
        b.markerInterval = getShort(a, 14);
        b.reserved = Arrays.copyOfRange(a, RESERVED_OFFSET, RESERVED_OFFSET + RESERVED_LENGTH);
        return new IftAdaptionIndication(b);
    }

    private static int crc(byte[] a, int from) {
        CRC32C c = new CRC32C();
        c.update(a, from, CRC_COVERAGE);
        return (int) c.getValue();
    }

    private static void putInt(byte[] a, int i, int v) {
        putShort(a, i, v >>> 16);
        putShort(a, i + 2, v);
    }

    private static void putShort(byte[] a, int i, int v) {
        a[i] = (byte) (v >>> 8);
        a[i + 1] = (byte) v;
    }

    private static int getShort(byte[] a, int i) {
        return (a[i] & 0xFF) << 8 | (a[i + 1] & 0xFF);
    }

    private static int getInt(byte[] a, int i) {
        return getShort(a, i) << 16 | getShort(a, i + 2);
    }

    static String hex(byte[] a) {
        StringBuilder sb = new StringBuilder();
        for (byte x : a) {
            sb.append(sb.length() == 0 ? "" : " ").append(String.format("%02x", x & 0xFF));
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof IftAdaptionIndication)) {
            return false;
        }
        IftAdaptionIndication x = (IftAdaptionIndication) o;
        return version == x.version && bcVersion == x.bcVersion && flags == x.flags && senderVTag == x.senderVTag
                && markerInterval == x.markerInterval && Arrays.equals(reserved, x.reserved);
    }

    @Override
    public int hashCode() {
        return ((version * 31 + bcVersion) * 31 + flags) * 31 + senderVTag * 65537 + markerInterval
                + Arrays.hashCode(reserved);
    }

    @Override
    public String toString() {
        return String.format("IFT adaption indication phase %d, version %d, BC version %d, flags %s, VTag 0x%04X%s%s",
                phase(), version, bcVersion, IftFlag.describe(flags), senderVTag,
                markerInterval != 0 ? ", marker interval " + markerInterval : "",
                hasNonZeroReservedOctets() ? ", non-zero reserved octets" : "");
    }

    /** Builder; every field is settable to any value its width allows, so tests can build hostile ones. */
    public static final class Builder {
        private int version = VERSION;
        private int bcVersion = VERSION;
        private int flags;
        private int senderVTag;
        private int markerInterval;
        private byte[] reserved = new byte[RESERVED_LENGTH];

        private Builder() {
        }

        /** Sets the Version field. */
        public Builder version(int version) {
            this.version = check16("version", version);
            return this;
        }

        /** Sets the BC Version field. */
        public Builder bcVersion(int bcVersion) {
            this.bcVersion = check16("BC version", bcVersion);
            return this;
        }

        /** The whole flag field, reserved bits included. */
        public Builder flags(int flags) {
            this.flags = flags;
            return this;
        }

        /** Sets or clears one flag bit. */
        public Builder flag(IftFlag flag, boolean set) {
            this.flags = set ? flags | flag.mask() : flags & ~flag.mask();
            return this;
        }

        /** Sets the sender's VTag, which the peer's frames must carry. */
        public Builder senderVTag(int vTag) {
            this.senderVTag = check16("VTag", vTag);
            return this;
        }

        /** Sets the Marker Interval field. */
        public Builder markerInterval(int interval) {
            this.markerInterval = check16("marker interval", interval);
            return this;
        }

        /** Octets 16..59 (44 octets; the draft says zero). */
        public Builder reserved(byte[] reserved) {
            if (reserved.length != RESERVED_LENGTH) {
                throw new IllegalArgumentException("reserved area is 44 octets: " + reserved.length);
            }
            this.reserved = reserved.clone();
            return this;
        }

        /** The indication with the fields set so far. */
        public IftAdaptionIndication build() {
            return new IftAdaptionIndication(this);
        }

        private static int check16(String what, int v) {
            if ((v & ~0xFFFF) != 0) {
                throw new IllegalArgumentException(what + " is 16 bits: " + v);
            }
            return v;
        }
    }
}
