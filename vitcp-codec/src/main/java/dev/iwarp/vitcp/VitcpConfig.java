package dev.iwarp.vitcp;

import java.time.Duration;

/**
 * What one end of a VI/TCP connection proposes (the VI attributes of [VIAR] as carried by the CE Header,
 * draft-dicecco-vitcp-01 §3.3) plus this implementation's limits. Immutable; build with {@link #builder()}.
 */
public final class VitcpConfig {
    /** Largest payload per segment: the 16-bit Segment Length minus the 40 octets of VI and RDMA headers. */
    public static final int MAX_MTU = 0xFFFF - ViSegment.HEADER_LENGTH - ViRdmaHeader.LENGTH;

    private final ViReliabilityLevel reliabilityLevel;
    private final boolean rdmaWriteEnable;
    private final boolean rdmaReadEnable;
    private final boolean descriptorFlowControl;
    private final int mtu;
    private final int rdmaReadWindow;
    private final boolean crcOption;
    private final VitcpCrcMode crcMode;
    private final boolean crcOnRejectAndNoMatch;
    private final Duration connectTimeout;
    private final Duration incomingTimeout;

    private VitcpConfig(Builder b) {
        this.reliabilityLevel = b.reliabilityLevel;
        this.rdmaWriteEnable = b.rdmaWriteEnable;
        this.rdmaReadEnable = b.rdmaReadEnable;
        this.descriptorFlowControl = b.descriptorFlowControl;
        this.mtu = b.mtu;
        this.rdmaReadWindow = b.rdmaReadWindow;
        this.crcOption = b.crcOption;
        this.crcMode = b.crcMode;
        this.crcOnRejectAndNoMatch = b.crcOnRejectAndNoMatch;
        this.connectTimeout = b.connectTimeout;
        this.incomingTimeout = b.incomingTimeout;
    }

    public static Builder builder() {
        return new Builder();
    }

    public static VitcpConfig defaults() {
        return builder().build();
    }

    public ViReliabilityLevel reliabilityLevel() {
        return reliabilityLevel;
    }

    public boolean rdmaWriteEnable() {
        return rdmaWriteEnable;
    }

    public boolean rdmaReadEnable() {
        return rdmaReadEnable;
    }

    /** This end holds its sends until the peer has posted receive descriptors (§3.3). */
    public boolean descriptorFlowControl() {
        return descriptorFlowControl;
    }

    /** Largest payload octets per segment this end proposes (§2.2.1 "Attribute Negotiation"). */
    public int mtu() {
        return mtu;
    }

    /** Outstanding RDMA Reads this end proposes (§2.2.2.2.6). */
    public int rdmaReadWindow() {
        return rdmaReadWindow;
    }

    public boolean crcOption() {
        return crcOption;
    }

    public VitcpCrcMode crcMode() {
        return crcMode;
    }

    /** Whether ConnectReject/ConnectNoMatch we send carry a trailer when the request had the CRC option (§3.5). */
    public boolean crcOnRejectAndNoMatch() {
        return crcOnRejectAndNoMatch;
    }

    /** Active side: Connecting plus Pending Accept (§4.2 "Timeout"), the VI Consumer's connection timeout. */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** Passive side: how long an accepted TCP connection may stay Incoming (§4.3 "Timeout"). */
    public Duration incomingTimeout() {
        return incomingTimeout;
    }

    public int callingAttributes(boolean peerToPeer) {
        return ViCallingAttributes.of(reliabilityLevel, rdmaWriteEnable, rdmaReadEnable, descriptorFlowControl,
                peerToPeer);
    }

    public Builder toBuilder() {
        return new Builder().reliabilityLevel(reliabilityLevel).rdmaWriteEnable(rdmaWriteEnable)
                .rdmaReadEnable(rdmaReadEnable).descriptorFlowControl(descriptorFlowControl).mtu(mtu)
                .rdmaReadWindow(rdmaReadWindow).crcOption(crcOption).crcMode(crcMode)
                .crcOnRejectAndNoMatch(crcOnRejectAndNoMatch).connectTimeout(connectTimeout)
                .incomingTimeout(incomingTimeout);
    }

    @Override
    public String toString() {
        return "VitcpConfig(" + reliabilityLevel + ", mtu=" + mtu + ", readWindow=" + rdmaReadWindow
                + (rdmaWriteEnable ? ", RDMA write" : "") + (rdmaReadEnable ? ", RDMA read" : "")
                + (descriptorFlowControl ? ", DFC" : "") + (crcOption ? ", CRC " + crcMode : "") + ")";
    }

    /** Builder with safe defaults: Reliable Delivery, MTU 8192, read window 4, no CRC, 10 s timeouts. */
    public static final class Builder {
        private ViReliabilityLevel reliabilityLevel = ViReliabilityLevel.RELIABLE_DELIVERY;
        private boolean rdmaWriteEnable = true;
        private boolean rdmaReadEnable = true;
        private boolean descriptorFlowControl;
        private int mtu = 8192;
        private int rdmaReadWindow = 4;
        private boolean crcOption;
        private VitcpCrcMode crcMode = VitcpCrcMode.ETHERNET_REFLECTED;
        private boolean crcOnRejectAndNoMatch = true;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration incomingTimeout = Duration.ofSeconds(10);

        public Builder reliabilityLevel(ViReliabilityLevel v) {
            reliabilityLevel = java.util.Objects.requireNonNull(v);
            return this;
        }

        public Builder rdmaWriteEnable(boolean v) {
            rdmaWriteEnable = v;
            return this;
        }

        public Builder rdmaReadEnable(boolean v) {
            rdmaReadEnable = v;
            return this;
        }

        public Builder descriptorFlowControl(boolean v) {
            descriptorFlowControl = v;
            return this;
        }

        public Builder mtu(int v) {
            if (v < 1 || v > MAX_MTU) {
                throw new IllegalArgumentException("mtu must be 1.." + MAX_MTU + ": " + v);
            }
            mtu = v;
            return this;
        }

        public Builder rdmaReadWindow(int v) {
            if (v < 0 || v > 0xFFFF) {
                throw new IllegalArgumentException("rdmaReadWindow must be 0..65535: " + v);
            }
            rdmaReadWindow = v;
            return this;
        }

        public Builder crcOption(boolean v) {
            crcOption = v;
            return this;
        }

        public Builder crcMode(VitcpCrcMode v) {
            crcMode = java.util.Objects.requireNonNull(v);
            return this;
        }

        public Builder crcOnRejectAndNoMatch(boolean v) {
            crcOnRejectAndNoMatch = v;
            return this;
        }

        public Builder connectTimeout(Duration v) {
            connectTimeout = v;
            return this;
        }

        public Builder incomingTimeout(Duration v) {
            incomingTimeout = v;
            return this;
        }

        public VitcpConfig build() {
            return new VitcpConfig(this);
        }
    }
}
