package dev.iwarp.vitcp;

import java.util.HexFormat;

/**
 * The negotiated parameters of an established VI/TCP connection, reported once by the startup handlers (as the
 * result and as a user event) and handed to the full-operation handler. draft-dicecco-vitcp-01 §3.3, §3.6.
 *
 * @param active                       whether this end sent the ConnectRequest (§4.2)
 * @param reliabilityLevel             the common reliability level (both ends must match, §3.3)
 * @param mtu                          agreed: the lesser of both proposals (§2.2.1, §3.3 "MTU Size")
 * @param rdmaReadWindow               agreed outstanding RDMA Reads, the lesser of both proposals (§2.2.2.2.6)
 * @param crcEnabled                   both CE frames carried the CRC option (§3.6)
 * @param crcMode                      bit-order interpretation of the CRC in use
 * @param localAttributes              Calling Attributes this end sent
 * @param remoteAttributes             Calling Attributes the peer sent
 * @param localDiscriminator           this end's discriminator
 * @param remoteDiscriminator          the peer's discriminator
 * @param remoteRxDescriptorsPosted    the peer's Rx Descriptors Posted in its CE segment (§3.2)
 * @param peerUrgentMarkerOption       the peer sent the Urgent Marker option (we never use it, §3.7)
 */
public record VitcpConnection(boolean active, ViReliabilityLevel reliabilityLevel, int mtu, int rdmaReadWindow,
                              boolean crcEnabled, VitcpCrcMode crcMode, int localAttributes, int remoteAttributes,
                              byte[] localDiscriminator, byte[] remoteDiscriminator, int remoteRxDescriptorsPosted,
                              boolean peerUrgentMarkerOption) {

    public VitcpConnection {
        localDiscriminator = localDiscriminator.clone();
        remoteDiscriminator = remoteDiscriminator.clone();
    }

    @Override
    public byte[] localDiscriminator() {
        return localDiscriminator.clone();
    }

    @Override
    public byte[] remoteDiscriminator() {
        return remoteDiscriminator.clone();
    }

    /** This end holds sends until the peer posted receives: it set Descriptor Flow Control (§3.3). */
    public boolean localDescriptorFlowControl() {
        return ViCallingAttributes.has(localAttributes, ViCallingAttributes.DESCRIPTOR_FLOW_CONTROL);
    }

    /** The peer set Descriptor Flow Control, so this end must keep it informed of posted receives (§3.3). */
    public boolean remoteDescriptorFlowControl() {
        return ViCallingAttributes.has(remoteAttributes, ViCallingAttributes.DESCRIPTOR_FLOW_CONTROL);
    }

    /** Incoming RDMA Writes are permitted on this VI. */
    public boolean localRdmaWriteEnable() {
        return ViCallingAttributes.has(localAttributes, ViCallingAttributes.RDMA_WRITE_ENABLE);
    }

    /** Incoming RDMA Read Requests are permitted on this VI. */
    public boolean localRdmaReadEnable() {
        return ViCallingAttributes.has(localAttributes, ViCallingAttributes.RDMA_READ_ENABLE);
    }

    public boolean peerToPeer() {
        return ViCallingAttributes.has(localAttributes, ViCallingAttributes.PEER_TO_PEER);
    }

    @Override
    public String toString() {
        HexFormat h = HexFormat.of();
        return "VitcpConnection(" + (active ? "active" : "passive") + ", " + reliabilityLevel + ", mtu=" + mtu
                + ", readWindow=" + rdmaReadWindow + ", crc=" + (crcEnabled ? crcMode : "off")
                + ", local=0x" + Integer.toHexString(localAttributes) + "/" + h.formatHex(localDiscriminator)
                + ", remote=0x" + Integer.toHexString(remoteAttributes) + "/" + h.formatHex(remoteDiscriminator)
                + ")";
    }
}
