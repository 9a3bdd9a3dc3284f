package dev.iwarp.sctp;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What the local endpoint indicates, how indications travel, which peer indications the ULP
 * accepts, and the limits of the shim (derived in the module README). Immutable; {@link #toBuilder()} for variants.
 */
public final class SctpSettings {
    /** Default maximum user data per message: safe for IPv4 and IPv6 at MTU 1500 (with
     * fragmentation disabled, one message must fit one packet). */
    public static final int DEFAULT_MAX_CHUNK_USER_DATA = 1432;
    /** Largest user data of one unfragmented DATA chunk (16-bit chunk Length minus the chunk header). */
    public static final int MAX_CHUNK_USER_DATA = 65519;
    /** Default reorder window: chunks held ahead of the next AWS (bounded, so a peer cannot make us hold more). */
    public static final int DEFAULT_REORDER_MESSAGES = 4096;
    public static final int DEFAULT_REORDER_BYTES = 8 << 20;
    /** Adaptation Hello limits (the opt-in fallback indication; not in the draft). */
    public static final long DEFAULT_HELLO_TIMEOUT_MILLIS = 10_000;
    public static final int DEFAULT_EARLY_MESSAGES = 64;
    public static final int DEFAULT_EARLY_BYTES = 256 << 10;

    private final SctpIndication localIndication;
    private final Set<SctpIndication> acceptedPeerIndications;
    private final IndicationTransport transport;
    private final SctpIndication staticPeerIndication;
    private final int maxChunkUserData;
    private final int reorderMessages;
    private final int reorderBytes;
    private final long helloTimeoutMillis;
    private final int earlyMessages;
    private final int earlyBytes;

    private SctpSettings(Builder b) {
        this.localIndication = b.localIndication;
        this.acceptedPeerIndications = Collections.unmodifiableSet(EnumSet.copyOf(b.acceptedPeerIndications));
        this.transport = b.transport;
        this.staticPeerIndication = b.staticPeerIndication;
        this.maxChunkUserData = b.maxChunkUserData;
        this.reorderMessages = b.reorderMessages;
        this.reorderBytes = b.reorderBytes;
        this.helloTimeoutMillis = b.helloTimeoutMillis;
        this.earlyMessages = b.earlyMessages;
        this.earlyBytes = b.earlyBytes;
    }

    /**
     * What the RDMAP stack uses: indicate RDMA_AND_NEGOTIATION, accept only it from the peer (RDMAP needs
     * non-placed messages too),
     * the indication on the wire natively, 1432 octets per message.
     */
    public static SctpSettings defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.localIndication = localIndication;
        b.acceptedPeerIndications = EnumSet.copyOf(acceptedPeerIndications);
        b.transport = transport;
        b.staticPeerIndication = staticPeerIndication;
        b.maxChunkUserData = maxChunkUserData;
        b.reorderMessages = reorderMessages;
        b.reorderBytes = reorderBytes;
        b.helloTimeoutMillis = helloTimeoutMillis;
        b.earlyMessages = earlyMessages;
        b.earlyBytes = earlyBytes;
        return b;
    }

    /** What we indicate, or {@code null} for none (plain SCTP: the adaptation stays disabled, §3). */
    public SctpIndication localIndication() {
        return localIndication;
    }

    /** Peer indications the ULP accepts; any other present value is I2. */
    public Set<SctpIndication> acceptedPeerIndications() {
        return acceptedPeerIndications;
    }

    public IndicationTransport transport() {
        return transport;
    }

    /** With {@link IndicationTransport#STATIC}: the peer's configured indication ({@code null}: none). */
    public SctpIndication staticPeerIndication() {
        return staticPeerIndication;
    }

    /** Largest user data of one message (extension included) we send or accept (C10). */
    public int maxChunkUserData() {
        return maxChunkUserData;
    }

    public int reorderMessages() {
        return reorderMessages;
    }

    public int reorderBytes() {
        return reorderBytes;
    }

    public long helloTimeoutMillis() {
        return helloTimeoutMillis;
    }

    public int earlyMessages() {
        return earlyMessages;
    }

    public int earlyBytes() {
        return earlyBytes;
    }

    @Override
    public String toString() {
        return "indication " + (localIndication == null ? "none" : localIndication) + " via " + transport
                + (transport == IndicationTransport.STATIC ? " (peer " + staticPeerIndication + ")" : "")
                + ", accepts " + acceptedPeerIndications + ", max chunk user data " + maxChunkUserData;
    }

    /** Builder of {@link SctpSettings}. */
    public static final class Builder {
        private SctpIndication localIndication = SctpIndication.RDMA_AND_NEGOTIATION;
        private Set<SctpIndication> acceptedPeerIndications = EnumSet.of(SctpIndication.RDMA_AND_NEGOTIATION);
        private IndicationTransport transport = IndicationTransport.NATIVE;
        private SctpIndication staticPeerIndication = SctpIndication.RDMA_AND_NEGOTIATION;
        private int maxChunkUserData = DEFAULT_MAX_CHUNK_USER_DATA;
        private int reorderMessages = DEFAULT_REORDER_MESSAGES;
        private int reorderBytes = DEFAULT_REORDER_BYTES;
        private long helloTimeoutMillis = DEFAULT_HELLO_TIMEOUT_MILLIS;
        private int earlyMessages = DEFAULT_EARLY_MESSAGES;
        private int earlyBytes = DEFAULT_EARLY_BYTES;

        private Builder() {
        }

        /** What we indicate; {@code null} for nothing (plain SCTP). */
        public Builder localIndication(SctpIndication indication) {
            this.localIndication = indication;
            return this;
        }

        /** The peer indications the ULP accepts (at least one). */
        public Builder acceptPeer(SctpIndication first, SctpIndication... more) {
            this.acceptedPeerIndications = EnumSet.of(first, more);
            return this;
        }

        public Builder transport(IndicationTransport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /** {@link IndicationTransport#STATIC} with this peer value ({@code null}: the peer indicates none). */
        public Builder staticPeer(SctpIndication peer) {
            this.transport = IndicationTransport.STATIC;
            this.staticPeerIndication = peer;
            return this;
        }

        public Builder maxChunkUserData(int octets) {
            if (octets < 36 || octets > MAX_CHUNK_USER_DATA) {
                throw new IllegalArgumentException("max chunk user data must be 36.." + MAX_CHUNK_USER_DATA
                        + " (extension 20 + a DDP header): " + octets);
            }
            this.maxChunkUserData = octets;
            return this;
        }

        public Builder reorderWindow(int messages, int bytes) {
            if (messages < 1 || bytes < 1) {
                throw new IllegalArgumentException("reorder window must be positive: " + messages + ", " + bytes);
            }
            this.reorderMessages = messages;
            this.reorderBytes = bytes;
            return this;
        }

        public Builder helloTimeoutMillis(long millis) {
            if (millis <= 0) {
                throw new IllegalArgumentException("hello timeout must be positive: " + millis);
            }
            this.helloTimeoutMillis = millis;
            return this;
        }

        public Builder earlyLimits(int messages, int bytes) {
            this.earlyMessages = messages;
            this.earlyBytes = bytes;
            return this;
        }

        public SctpSettings build() {
            return new SctpSettings(this);
        }
    }
}
