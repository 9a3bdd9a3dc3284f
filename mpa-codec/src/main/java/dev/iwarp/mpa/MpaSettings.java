package dev.iwarp.mpa;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * What this endpoint asks for and accepts during MPA startup. Immutable; build with {@link #builder()}.
 * Defaults are safe and interoperate with Linux siw: Rev 2, CRC on, no markers requested, IRD/ORD 16,
 * Private Data limit 512, 10 s startup timeout.
 */
public final class MpaSettings {
    /** MPA/DDP maximum for an FPDU's ULPDU from a sender (RFC 5044 §3). */
    public static final int MAX_SEND_ULPDU = 64768;
    /** Smallest MULPDU MPA ever reports (RFC 5044 §4.5). */
    public static final int MIN_MULPDU = 128;
    /** EMSS assumed when the transport cannot report it (draft §3.1.1). */
    public static final int DEFAULT_EMSS = 1460;

    private final int revision;
    private final int minRevision;
    private final boolean rev1Fallback;
    private final boolean crc;
    private final boolean markers;
    private final boolean acceptMarkers;
    private final byte[] privateData;
    private final int privateDataLimit;
    private final long startupTimeoutMillis;
    private final int ird;
    private final int ord;
    private final int maxIrd;
    private final boolean peerToPeer;
    private final boolean acceptPeerToPeer;
    private final List<RtrType> rtrTypes;
    private final int maxUlpduLength;
    private final int emss;
    private final boolean responderMaySendFirst;
    private final MpaTerminateFactory terminateFactory;

    private MpaSettings(Builder b) {
        this.revision = b.revision;
        this.minRevision = b.minRevision;
        this.rev1Fallback = b.rev1Fallback;
        this.crc = b.crc;
        this.markers = b.markers;
        this.acceptMarkers = b.acceptMarkers;
        this.privateData = b.privateData.clone();
        this.privateDataLimit = b.privateDataLimit;
        this.startupTimeoutMillis = b.startupTimeoutMillis;
        this.ird = b.ird;
        this.ord = b.ord;
        this.maxIrd = Math.max(b.maxIrd, b.ird);
        this.peerToPeer = b.peerToPeer;
        this.acceptPeerToPeer = b.acceptPeerToPeer;
        this.rtrTypes = Collections.unmodifiableList(new ArrayList<>(b.rtrTypes));
        this.maxUlpduLength = b.maxUlpduLength;
        this.emss = b.emss;
        this.responderMaySendFirst = b.responderMaySendFirst;
        this.terminateFactory = b.terminateFactory;
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** The defaults. */
    public static MpaSettings defaults() {
        return new Builder().build();
    }

    /** A builder starting from these settings. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.revision = revision;
        b.minRevision = minRevision;
        b.rev1Fallback = rev1Fallback;
        b.crc = crc;
        b.markers = markers;
        b.acceptMarkers = acceptMarkers;
        b.privateData = privateData.clone();
        b.privateDataLimit = privateDataLimit;
        b.startupTimeoutMillis = startupTimeoutMillis;
        b.ird = ird;
        b.ord = ord;
        b.maxIrd = maxIrd;
        b.peerToPeer = peerToPeer;
        b.acceptPeerToPeer = acceptPeerToPeer;
        b.rtrTypes = new LinkedHashSet<>(rtrTypes);
        b.maxUlpduLength = maxUlpduLength;
        b.emss = emss;
        b.responderMaySendFirst = responderMaySendFirst;
        b.terminateFactory = terminateFactory;
        return b;
    }

    /** Initiator: the Rev sent in the Request. Responder: the highest Rev accepted. */
    public int revision() {
        return revision;
    }

    /** The lowest Rev accepted from the peer (0 = also talk to 2004-draft / RDMAC peers). */
    public int minRevision() {
        return minRevision;
    }

    /**
     * Initiator only: when a Rev 2 Request is answered with a Rev 1 Reply, accept it as Rev 1 instead
     * of failing (RFC 6581 forbids that Reply, but RFC 5044-only peers exist), and when the peer closes
     * before any Reply, report it with a {@link MpaRevisionRefusedException} so the caller can retry
     * with Rev 1 on a new TCP connection (mpa-rev2 §5).
     */
    public boolean rev1Fallback() {
        return rev1Fallback;
    }

    /** C bit sent: {@code true} (default, RFC 5044 §4.4) asks for CRCs; {@code false} asks to suppress them. */
    public boolean crc() {
        return crc;
    }

    /** M bit sent: ask the peer to put markers in what it sends us (RFC 5044 §7.1.1). */
    public boolean markers() {
        return markers;
    }

    /**
     * Responder: serve a Request with M=1, putting markers in every FPDU we send (RFC 5044 §7.1.1). Off by default:
     * the Request is answered with a Reply R=1, M=0 and the connection closed, as siw does (it never generates
     * markers). Marking every outgoing FPDU costs far more CPU than asking for it costs the peer.
     */
    public boolean acceptMarkers() {
        return acceptMarkers;
    }

    /** Initiator: the ULP Private Data of the Request (after the IRD/ORD words when Rev 2). A copy. */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** Largest PD_Length accepted from the peer (RFC 5044: 512; may be configured lower). */
    public int privateDataLimit() {
        return privateDataLimit;
    }

    /** Time allowed for the whole startup phase, from TCP up to sending or receiving the Reply. */
    public long startupTimeoutMillis() {
        return startupTimeoutMillis;
    }

    /** Our Inbound RDMA Read queue Depth offered (RFC 6581 IRD). */
    public int ird() {
        return ird;
    }

    /** Our Outbound RDMA Read queue Depth wanted (RFC 6581 ORD). */
    public int ord() {
        return ord;
    }

    /** Initiator: how far IRD may be raised to match the Responder's ORD (mpa-rev2 §3). */
    public int maxIrd() {
        return maxIrd;
    }

    /** Initiator: ask for the RFC 6581 peer-to-peer model (A=1) offering {@link #rtrTypes()}. */
    public boolean peerToPeer() {
        return peerToPeer;
    }

    /** Responder: grant peer-to-peer when the Initiator asks for it (A=1) and offers a type we accept. */
    public boolean acceptPeerToPeer() {
        return acceptPeerToPeer;
    }

    /**
     * Initiator: RTR types offered. Responder: RTR types accepted, in order of preference (the first
     * one the Initiator offered is chosen). Default: Write, then Read (like siw; a Send RTR would
     * consume a posted receive).
     */
    public List<RtrType> rtrTypes() {
        return rtrTypes;
    }

    /** Largest ULPDU_Length accepted from the peer (default 65535: siw exceeds 64768 on loopback). */
    public int maxUlpduLength() {
        return maxUlpduLength;
    }

    /** EMSS to derive MULPDU from; 0 = ask the transport (TCP_MAXSEG on epoll), else {@link #DEFAULT_EMSS}. */
    public int emss() {
        return emss;
    }

    /**
     * Responder: send FPDUs before one was received, waiving RFC 5044 §7.1.2 rule 4. Off by default;
     * for Rev 0 / RDMAC-era peers that expect it.
     */
    public boolean responderMaySendFirst() {
        return responderMaySendFirst;
    }

    /** Supplies the RDMAP Terminate for RFC 6581 negotiation failures; {@code null}: just close. */
    public MpaTerminateFactory terminateFactory() {
        return terminateFactory;
    }

    @Override
    public String toString() {
        return "MpaSettings{rev=" + revision + " (min " + minRevision + (rev1Fallback ? ", rev1 fallback" : "")
                + "), crc=" + crc + ", markers=" + markers + (acceptMarkers ? ", acceptMarkers" : "") + ", ird=" + ird + ", ord=" + ord
                + ", p2p=" + peerToPeer + " " + rtrTypes + ", pdLimit=" + privateDataLimit
                + ", timeout=" + startupTimeoutMillis + "ms}";
    }

    /** Builder with safe defaults. */
    public static final class Builder {
        private int revision = 2;
        private int minRevision = 0;
        private boolean rev1Fallback;
        private boolean crc = true;
        private boolean markers;
        private boolean acceptMarkers;
        private byte[] privateData = new byte[0];
        private int privateDataLimit = MpaStartupFrame.MAX_PRIVATE_DATA;
        private long startupTimeoutMillis = 10_000;
        private int ird = 16;
        private int ord = 16;
        private int maxIrd = 128;
        private boolean peerToPeer;
        private boolean acceptPeerToPeer = true;
        private Set<RtrType> rtrTypes = new LinkedHashSet<>(List.of(RtrType.WRITE, RtrType.READ));
        private int maxUlpduLength = 0xFFFF;
        private int emss;
        private boolean responderMaySendFirst;
        private MpaTerminateFactory terminateFactory;

        private Builder() {
        }

        public Builder revision(int revision) {
            if (revision < 0 || revision > 2) {
                throw new IllegalArgumentException("MPA revisions 0, 1 and 2 are implemented: " + revision);
            }
            this.revision = revision;
            return this;
        }

        public Builder minRevision(int minRevision) {
            if (minRevision < 0 || minRevision > 2) {
                throw new IllegalArgumentException("minRevision must be 0..2: " + minRevision);
            }
            this.minRevision = minRevision;
            return this;
        }

        public Builder rev1Fallback(boolean rev1Fallback) {
            this.rev1Fallback = rev1Fallback;
            return this;
        }

        public Builder crc(boolean crc) {
            this.crc = crc;
            return this;
        }

        public Builder markers(boolean markers) {
            this.markers = markers;
            return this;
        }

        /** Responder: serve Requests with M=1 (see {@link MpaSettings#acceptMarkers()}); default false. */
        public Builder acceptMarkers(boolean acceptMarkers) {
            this.acceptMarkers = acceptMarkers;
            return this;
        }

        public Builder privateData(byte[] privateData) {
            this.privateData = privateData == null ? new byte[0] : privateData.clone();
            return this;
        }

        public Builder privateDataLimit(int limit) {
            if (limit < 0 || limit > MpaStartupFrame.MAX_PRIVATE_DATA) {
                throw new IllegalArgumentException("Private Data limit must be 0..512 (RFC 5044): " + limit);
            }
            this.privateDataLimit = limit;
            return this;
        }

        public Builder startupTimeout(long amount, TimeUnit unit) {
            if (amount <= 0) {
                throw new IllegalArgumentException("startup timeout must be positive: " + amount);
            }
            this.startupTimeoutMillis = unit.toMillis(amount);
            return this;
        }

        public Builder ird(int ird) {
            checkIrdOrd("IRD", ird);
            this.ird = ird;
            return this;
        }

        public Builder ord(int ord) {
            checkIrdOrd("ORD", ord);
            this.ord = ord;
            return this;
        }

        public Builder maxIrd(int maxIrd) {
            checkIrdOrd("max IRD", maxIrd);
            this.maxIrd = maxIrd;
            return this;
        }

        public Builder peerToPeer(boolean peerToPeer) {
            this.peerToPeer = peerToPeer;
            return this;
        }

        public Builder acceptPeerToPeer(boolean accept) {
            this.acceptPeerToPeer = accept;
            return this;
        }

        public Builder rtrTypes(RtrType... types) {
            if (types.length == 0) {
                throw new IllegalArgumentException("at least one RTR type");
            }
            this.rtrTypes = new LinkedHashSet<>(List.of(types));
            return this;
        }

        public Builder maxUlpduLength(int max) {
            if (max < MIN_MULPDU || max > 0xFFFF) {
                throw new IllegalArgumentException("maxUlpduLength must be 128..65535: " + max);
            }
            this.maxUlpduLength = max;
            return this;
        }

        public Builder emss(int emss) {
            if (emss < 0 || emss > 0xFFFF) {
                throw new IllegalArgumentException("EMSS must be 0 (auto) or up to 65535: " + emss);
            }
            this.emss = emss;
            return this;
        }

        public Builder responderMaySendFirst(boolean b) {
            this.responderMaySendFirst = b;
            return this;
        }

        public Builder terminateFactory(MpaTerminateFactory factory) {
            this.terminateFactory = factory;
            return this;
        }

        public MpaSettings build() {
            if (minRevision > revision) {
                throw new IllegalStateException("minRevision " + minRevision + " > revision " + revision);
            }
            int pd = privateData.length + (revision == 2 ? MpaIrdOrd.LENGTH : 0);
            if (pd > MpaStartupFrame.MAX_PRIVATE_DATA) {
                throw new IllegalStateException("Request Private Data of " + pd + " octets exceeds 512 (RFC 5044)");
            }
            Objects.requireNonNull(rtrTypes);
            return new MpaSettings(this);
        }

        private static void checkIrdOrd(String what, int v) {
            if (v < 0 || v > MpaIrdOrd.MAX_VALUE) {
                throw new IllegalArgumentException(what + " must be 0.." + MpaIrdOrd.MAX_VALUE + ": " + v);
            }
        }
    }

    static Set<RtrType> asSet(List<RtrType> types) {
        return types.isEmpty() ? EnumSet.noneOf(RtrType.class) : EnumSet.copyOf(types);
    }
}
