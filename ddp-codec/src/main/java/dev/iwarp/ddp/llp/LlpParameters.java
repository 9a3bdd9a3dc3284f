package dev.iwarp.ddp.llp;

import dev.iwarp.ddp.DdpSegment;
import dev.iwarp.ddp.MulpduSource;

import java.util.Objects;

/**
 * What a framing's startup established, in terms the layers above understand. Immutable (MULPDU is
 * read from its source each time: it may change with the path). The framing's own outcome (MPA's
 * revision and CRC, IFT's VTags, ...) rides along as a typed extra: {@link #framing(Class)}.
 */
public final class LlpParameters {
    private final String framingName;
    private final LlpRole role;
    private final MulpduSource mulpdu;
    private final int version;
    private final int ird;
    private final int ord;
    private final RtrMessage rtr;
    private final byte[] peerPrivateData;
    private final boolean digestsPayload;
    private final Object framing;

    private LlpParameters(Builder b) {
        this.framingName = b.framingName;
        this.role = b.role;
        this.mulpdu = b.mulpdu;
        this.version = b.version;
        this.ird = b.ird;
        this.ord = b.ord;
        this.rtr = b.rtr;
        this.peerPrivateData = b.peerPrivateData;
        this.digestsPayload = b.digestsPayload;
        this.framing = b.framing;
    }

    /**
     * A builder with the defaults: DDP/RDMAP version 1, IRD and ORD 0, no RTR, no private data.
     *
     * @param framingName for logs and tools, e.g. {@code "MPA Rev 2"} or {@code "IFT"}
     * @param framing     the framing's own parameters object (the typed extra)
     */
    public static Builder builder(String framingName, LlpRole role, MulpduSource mulpdu, Object framing) {
        return new Builder(framingName, role, mulpdu, framing);
    }

    /** The framing in use, as a short name for logs, e.g. {@code "MPA Rev 2"}. */
    public String framingName() {
        return framingName;
    }

    public LlpRole role() {
        return role;
    }

    /** Current MULPDU: the largest DDP segment (header included) one framing unit carries. */
    public int mulpdu() {
        return mulpdu.mulpdu();
    }

    /**
     * DV of every DDP segment of the stream: 1 (RFC 5041), or 0 on an RDMAC-era stream (MPA Rev 0,
     * RFC 5044 Appendix C).
     */
    public int ddpVersion() {
        return version;
    }

    /** RV of every RDMAP control octet: follows the DDP version (0 with DV 0, else 1). */
    public int rdmapVersion() {
        return version;
    }

    /** Our Inbound RDMA Read queue Depth: Read and Atomic Requests we accept outstanding. */
    public int ird() {
        return ird;
    }

    /** Our Outbound RDMA Read queue Depth: Read and Atomic Requests we may have outstanding. */
    public int ord() {
        return ord;
    }

    /** The RFC 6581 RTR the Initiator sends first, or {@code null} in the client-server model. */
    public RtrMessage rtr() {
        return rtr;
    }

    /** The peer's ULP private data from the startup exchange (empty when the framing has none). A copy. */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /**
     * Whether the framing computes a checksum over each outbound ULPDU when it is handed down (MPA's
     * CRC32C, IFT's payload CRC), before the transport copies the octets. A payload whose memory may
     * change meanwhile (a peer's RDMA Write into a region being read) is then copied first, so the
     * checksum covers exactly the octets that go on the wire (RFC 5044 §4.4).
     */
    public boolean digestsPayload() {
        return digestsPayload;
    }

    /** The framing's own parameters object (e.g. {@code MpaParameters}). */
    public Object framing() {
        return framing;
    }

    /**
     * The framing's own parameters as {@code type}.
     *
     * @throws IllegalStateException when this stream runs over another framing
     */
    public <T> T framing(Class<T> type) {
        if (!type.isInstance(framing)) {
            throw new IllegalStateException("this stream runs over " + framingName + ", whose parameters are not "
                    + type.getSimpleName());
        }
        return type.cast(framing);
    }

    /** Whether the framing's own parameters are a {@code type}. */
    public boolean isFraming(Class<?> type) {
        return type.isInstance(framing);
    }

    @Override
    public String toString() {
        return framingName + " " + role.name().toLowerCase() + ", DDP/RDMAP version " + version + ", IRD " + ird
                + " ORD " + ord + (rtr != null ? ", RTR " + rtr : "") + ", MULPDU " + mulpdu();
    }

    /** Builder of {@link LlpParameters}. */
    public static final class Builder {
        private final String framingName;
        private final LlpRole role;
        private final MulpduSource mulpdu;
        private final Object framing;
        private int version = DdpSegment.VERSION_1;
        private int ird;
        private int ord;
        private RtrMessage rtr;
        private byte[] peerPrivateData = new byte[0];
        private boolean digestsPayload;

        private Builder(String framingName, LlpRole role, MulpduSource mulpdu, Object framing) {
            this.framingName = Objects.requireNonNull(framingName, "framingName");
            this.role = Objects.requireNonNull(role, "role");
            this.mulpdu = Objects.requireNonNull(mulpdu, "mulpdu");
            this.framing = Objects.requireNonNull(framing, "framing");
        }

        /** DDP and RDMAP version: 1, or 0 for an RDMAC-era stream. */
        public Builder version(int version) {
            if (version != 0 && version != 1) {
                throw new IllegalArgumentException("DDP/RDMAP version is 0 or 1: " + version);
            }
            this.version = version;
            return this;
        }

        public Builder ird(int ird) {
            this.ird = checkDepth("IRD", ird);
            return this;
        }

        public Builder ord(int ord) {
            this.ord = checkDepth("ORD", ord);
            return this;
        }

        /** The RTR the Initiator sends first; {@code null} for none. */
        public Builder rtr(RtrMessage rtr) {
            this.rtr = rtr;
            return this;
        }

        /** The peer's private data (copied). */
        public Builder peerPrivateData(byte[] data) {
            this.peerPrivateData = data.clone();
            return this;
        }

        /** See {@link LlpParameters#digestsPayload()}. */
        public Builder digestsPayload(boolean digests) {
            this.digestsPayload = digests;
            return this;
        }

        public LlpParameters build() {
            return new LlpParameters(this);
        }

        private static int checkDepth(String what, int value) {
            if (value < 0) {
                throw new IllegalArgumentException(what + " must not be negative: " + value);
            }
            return value;
        }
    }
}
