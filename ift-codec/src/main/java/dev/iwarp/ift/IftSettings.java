package dev.iwarp.ift;

import java.security.SecureRandom;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * What this endpoint sends in its adaption indication and accepts in the peer's, plus the receive
 * limits of the framer. Immutable; build with {@link #builder()}. The defaults are safe:
 *
 * <ul>
 *   <li>role by connection direction (node A = the TCP active opener), RDMA mode;</li>
 *   <li>header and payload CRC sent (HC=PC=1) and checked (IH=IP=0); no CRC demanded of the peer;
 *       node B omits a CRC node A says it ignores;</li>
 *   <li>no speculative placement granted (SP=0), markers never (SM=RM=0, interval 0);</li>
 *   <li>a fresh VTag per connection from {@link SecureRandom};</li>
 *   <li>10 s adaption timeout; received header_size at most 64, payload_size at most 65535;
 *       MULPDU 65535; DDP/RDMAP version 1.</li>
 * </ul>
 */
public final class IftSettings {
    /** Largest MULPDU: both 16-bit size fields hold any split of it into header and payload. */
    public static final int MAX_ULPDU = 0xFFFF;
    /** Smallest MULPDU ever reported (DDP needs room for its largest header plus RDMAP headers). */
    public static final int MIN_ULPDU = 128;
    /** EMSS assumed for an SP-aligned MULPDU when none is configured. */
    public static final int DEFAULT_EMSS = 1460;

    private static final SecureRandom RANDOM = new SecureRandom();
    /** Default VTag policy: 16 bits from a shared {@link SecureRandom} (IFT draft §4.2: "a good random number generator"). */
    public static final IntSupplier SECURE_RANDOM_VTAG = () -> RANDOM.nextInt(0x10000);

    private final IftRole role;
    private final IftMode mode;
    private final boolean sendHeaderCrc;
    private final boolean sendPayloadCrc;
    private final boolean checkHeaderCrc;
    private final boolean checkPayloadCrc;
    private final boolean requirePeerHeaderCrc;
    private final boolean requirePeerPayloadCrc;
    private final boolean requirePeerChecksOurCrcs;
    private final boolean omitCrcsPeerIgnores;
    private final boolean grantSpeculativePlacement;
    private final long adaptionTimeoutMillis;
    private final IntSupplier vTagSource;
    private final int maxHeaderSize;
    private final int maxPayloadSize;
    private final int maxUlpdu;
    private final int emss;
    private final int ddpVersion;
    private final IftHeaderLength headerLength;

    private IftSettings(Builder b) {
        this.role = b.role;
        this.mode = b.mode;
        this.sendHeaderCrc = b.sendHeaderCrc;
        this.sendPayloadCrc = b.sendPayloadCrc;
        this.checkHeaderCrc = b.checkHeaderCrc;
        this.checkPayloadCrc = b.checkPayloadCrc;
        this.requirePeerHeaderCrc = b.requirePeerHeaderCrc;
        this.requirePeerPayloadCrc = b.requirePeerPayloadCrc;
        this.requirePeerChecksOurCrcs = b.requirePeerChecksOurCrcs;
        this.omitCrcsPeerIgnores = b.omitCrcsPeerIgnores;
        this.grantSpeculativePlacement = b.grantSpeculativePlacement;
        this.adaptionTimeoutMillis = b.adaptionTimeoutMillis;
        this.vTagSource = b.vTagSource;
        this.maxHeaderSize = b.maxHeaderSize;
        this.maxPayloadSize = b.maxPayloadSize;
        this.maxUlpdu = b.maxUlpdu;
        this.emss = b.emss;
        this.ddpVersion = b.ddpVersion;
        this.headerLength = b.headerLength;
    }

    public static Builder builder() {
        return new Builder();
    }

    public static IftSettings defaults() {
        return new Builder().build();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.role = role;
        b.mode = mode;
        b.sendHeaderCrc = sendHeaderCrc;
        b.sendPayloadCrc = sendPayloadCrc;
        b.checkHeaderCrc = checkHeaderCrc;
        b.checkPayloadCrc = checkPayloadCrc;
        b.requirePeerHeaderCrc = requirePeerHeaderCrc;
        b.requirePeerPayloadCrc = requirePeerPayloadCrc;
        b.requirePeerChecksOurCrcs = requirePeerChecksOurCrcs;
        b.omitCrcsPeerIgnores = omitCrcsPeerIgnores;
        b.grantSpeculativePlacement = grantSpeculativePlacement;
        b.adaptionTimeoutMillis = adaptionTimeoutMillis;
        b.vTagSource = vTagSource;
        b.maxHeaderSize = maxHeaderSize;
        b.maxPayloadSize = maxPayloadSize;
        b.maxUlpdu = maxUlpdu;
        b.emss = emss;
        b.ddpVersion = ddpVersion;
        b.headerLength = headerLength;
        return b;
    }

    /**
     * The configured role, or empty (the default) for "by connection direction": node A on a channel
     * that connected out (no parent), node B on an accepted one.
     */
    public Optional<IftRole> role() {
        return Optional.ofNullable(role);
    }

    /** Our R bit: RDMA (default) or DDP mode. */
    public IftMode mode() {
        return mode;
    }

    /** Our HC: put a header CRC in every frame we send (default true). */
    public boolean sendHeaderCrc() {
        return sendHeaderCrc;
    }

    /** Our PC: put a payload CRC in every frame we send (default true). */
    public boolean sendPayloadCrc() {
        return sendPayloadCrc;
    }

    /** Check received header CRCs (default true); false sends IH=1. */
    public boolean checkHeaderCrc() {
        return checkHeaderCrc;
    }

    /** Check received payload CRCs (default true); false sends IP=1. */
    public boolean checkPayloadCrc() {
        return checkPayloadCrc;
    }

    /** Refuse a peer whose HC=0 (A7). Default false. */
    public boolean requirePeerHeaderCrc() {
        return requirePeerHeaderCrc;
    }

    /** Refuse a peer whose PC=0 (A7). Default false. */
    public boolean requirePeerPayloadCrc() {
        return requirePeerPayloadCrc;
    }

    /** Refuse a peer that ignores a CRC we send (IH=1 while our HC=1, or IP=1 while our PC=1: A8). Default false. */
    public boolean requirePeerChecksOurCrcs() {
        return requirePeerChecksOurCrcs;
    }

    /** Node B only: do not send a CRC node A declared it ignores (default true). */
    public boolean omitCrcsPeerIgnores() {
        return omitCrcsPeerIgnores;
    }

    /** Our SP: let the peer place our data speculatively (default false; IFT draft §8.3). */
    public boolean grantSpeculativePlacement() {
        return grantSpeculativePlacement;
    }

    /** Time allowed for the peer's complete indication (default 10 s). */
    public long adaptionTimeoutMillis() {
        return adaptionTimeoutMillis;
    }

    /** Where our VTag comes from (default {@link #SECURE_RANDOM_VTAG}); the low 16 bits are used. */
    public IntSupplier vTagSource() {
        return vTagSource;
    }

    /** Largest header_size accepted (default 64; DDP needs 14 or 18). Larger: F1. */
    public int maxHeaderSize() {
        return maxHeaderSize;
    }

    /** Largest payload_size accepted (default 65535). Larger: F1. */
    public int maxPayloadSize() {
        return maxPayloadSize;
    }

    /** Largest ULPDU (DDP header + payload) DDP may hand the framer, before the SP rule (default 65535). */
    public int maxUlpdu() {
        return maxUlpdu;
    }

    /** EMSS used to align our frames to TCP segments when we grant speculative placement (default 1460). */
    public int emss() {
        return emss;
    }

    /** DDP and RDMAP version to run over IFT: 1 (RFC 5041/5040, default) or 0 (RDMAC-era peers). */
    public int ddpVersion() {
        return ddpVersion;
    }

    /** DDP header length from its first octet (default {@link IftHeaderLength#RFC5041}). */
    public IftHeaderLength headerLength() {
        return headerLength;
    }

    @Override
    public String toString() {
        return "IftSettings{role=" + (role == null ? "by connection" : role) + ", mode=" + mode
                + ", send HC=" + sendHeaderCrc + " PC=" + sendPayloadCrc + ", check header=" + checkHeaderCrc
                + " payload=" + checkPayloadCrc + ", require peer HC=" + requirePeerHeaderCrc + " PC="
                + requirePeerPayloadCrc + " checks=" + requirePeerChecksOurCrcs + ", omitCrcsPeerIgnores="
                + omitCrcsPeerIgnores + ", SP=" + grantSpeculativePlacement + ", timeout=" + adaptionTimeoutMillis
                + "ms, max header=" + maxHeaderSize + " payload=" + maxPayloadSize + ", maxUlpdu=" + maxUlpdu
                + ", DDP version " + ddpVersion + "}";
    }

    /** Builder with the safe defaults listed on {@link IftSettings}. */
    public static final class Builder {
        private IftRole role;
        private IftMode mode = IftMode.RDMA;
        private boolean sendHeaderCrc = true;
        private boolean sendPayloadCrc = true;
        private boolean checkHeaderCrc = true;
        private boolean checkPayloadCrc = true;
        private boolean requirePeerHeaderCrc;
        private boolean requirePeerPayloadCrc;
        private boolean requirePeerChecksOurCrcs;
        private boolean omitCrcsPeerIgnores = true;
        private boolean grantSpeculativePlacement;
        private long adaptionTimeoutMillis = 10_000;
        private IntSupplier vTagSource = SECURE_RANDOM_VTAG;
        private int maxHeaderSize = 64;
        private int maxPayloadSize = 0xFFFF;
        private int maxUlpdu = MAX_ULPDU;
        private int emss = DEFAULT_EMSS;
        private int ddpVersion = 1;
        private IftHeaderLength headerLength = IftHeaderLength.RFC5041;

        private Builder() {
        }

        /** A fixed role; {@code null} restores the default (by connection direction). */
        public Builder role(IftRole role) {
            this.role = role;
            return this;
        }

        public Builder mode(IftMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Our HC and PC at once. */
        public Builder sendCrcs(boolean header, boolean payload) {
            this.sendHeaderCrc = header;
            this.sendPayloadCrc = payload;
            return this;
        }

        /** Whether we check received header and payload CRCs (our IH = !header, IP = !payload). */
        public Builder checkCrcs(boolean header, boolean payload) {
            this.checkHeaderCrc = header;
            this.checkPayloadCrc = payload;
            return this;
        }

        public Builder requirePeerCrcs(boolean header, boolean payload) {
            this.requirePeerHeaderCrc = header;
            this.requirePeerPayloadCrc = payload;
            return this;
        }

        public Builder requirePeerChecksOurCrcs(boolean require) {
            this.requirePeerChecksOurCrcs = require;
            return this;
        }

        public Builder omitCrcsPeerIgnores(boolean omit) {
            this.omitCrcsPeerIgnores = omit;
            return this;
        }

        public Builder grantSpeculativePlacement(boolean grant) {
            this.grantSpeculativePlacement = grant;
            return this;
        }

        public Builder adaptionTimeout(long amount, TimeUnit unit) {
            if (amount <= 0) {
                throw new IllegalArgumentException("adaption timeout must be positive: " + amount);
            }
            this.adaptionTimeoutMillis = unit.toMillis(amount);
            return this;
        }

        /** A fixed VTag (0..65535) for every connection: for tests and known-answer captures only. */
        public Builder vTag(int vTag) {
            if ((vTag & ~0xFFFF) != 0) {
                throw new IllegalArgumentException("VTag is 16 bits: " + vTag);
            }
            this.vTagSource = () -> vTag;
            return this;
        }

        public Builder vTagSource(IntSupplier source) {
            this.vTagSource = Objects.requireNonNull(source, "source");
            return this;
        }

        public Builder maxHeaderSize(int max) {
            if (max < 1 || max > 0xFFFF) {
                throw new IllegalArgumentException("maxHeaderSize must be 1..65535: " + max);
            }
            this.maxHeaderSize = max;
            return this;
        }

        public Builder maxPayloadSize(int max) {
            if (max < 0 || max > 0xFFFF) {
                throw new IllegalArgumentException("maxPayloadSize must be 0..65535: " + max);
            }
            this.maxPayloadSize = max;
            return this;
        }

        public Builder maxUlpdu(int max) {
            if (max < MIN_ULPDU || max > MAX_ULPDU) {
                throw new IllegalArgumentException("maxUlpdu must be " + MIN_ULPDU + ".." + MAX_ULPDU + ": " + max);
            }
            this.maxUlpdu = max;
            return this;
        }

        public Builder emss(int emss) {
            if (emss < MIN_ULPDU || emss > 0xFFFF) {
                throw new IllegalArgumentException("EMSS must be " + MIN_ULPDU + "..65535: " + emss);
            }
            this.emss = emss;
            return this;
        }

        public Builder ddpVersion(int version) {
            if (version != 0 && version != 1) {
                throw new IllegalArgumentException("DDP/RDMAP version over IFT is 0 or 1: " + version);
            }
            this.ddpVersion = version;
            return this;
        }

        public Builder headerLength(IftHeaderLength headerLength) {
            this.headerLength = Objects.requireNonNull(headerLength, "headerLength");
            return this;
        }

        public IftSettings build() {
            return new IftSettings(this);
        }
    }
}
