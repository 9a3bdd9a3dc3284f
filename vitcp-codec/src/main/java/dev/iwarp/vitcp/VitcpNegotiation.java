package dev.iwarp.vitcp;

import dev.iwarp.framing.PeerAddress;
import io.netty.channel.ChannelHandlerContext;

import java.util.List;

/** The attribute rules of draft-dicecco-vitcp-01 §3.3 and the CE segments built from a {@link VitcpConfig}. */
final class VitcpNegotiation {
    private VitcpNegotiation() {
    }

    static ViSegment connectRequest(VitcpConfig c, byte[] local, byte[] remote, boolean p2p, int rxPosted) {
        ViCeHeader ce = new ViCeHeader(c.callingAttributes(p2p), c.mtu(), local, c.rdmaReadWindow(), remote,
                c.crcOption() ? List.of(ViCeOption.CRC_OPTION) : List.of(),
                // §3.3: with the CRC option the End Of Option List must be explicitly included
                c.crcOption());
        return ViSegment.builder(ViSegmentType.CONNECT_REQUEST).endOfMessage(true).rxDescriptorsPosted(rxPosted)
                .ceHeader(ce).build();
    }

    /**
     * Checks a received ConnectRequest against the local attributes; returns why it must be rejected, or null.
     */
    static String rejectReason(VitcpConfig local, boolean localP2p, ViCeHeader request) {
        ViReliabilityLevel level = request.reliabilityLevel();
        if (level == null) {
            return "Calling Attributes 0x" + Integer.toHexString(request.callingAttributes())
                    + " name no single reliability level";
        }
        if (level != local.reliabilityLevel()) {
            // §3.3: the reliability level of the two ends of a connection must match
            return "reliability level " + level + " does not match " + local.reliabilityLevel();
        }
        if (request.hasAttribute(ViCallingAttributes.PEER_TO_PEER) != localP2p) {
            // §3.3: the peer-to-peer bit must match
            return "peer-to-peer bit " + request.hasAttribute(ViCallingAttributes.PEER_TO_PEER) + " does not match";
        }
        if (request.mtuSize() < 1) {
            return "MTU Size 0";
        }
        return null;
    }

    static ViSegment connectAccept(VitcpConfig local, boolean p2p, byte[] localDiscriminator, ViCeHeader request,
                                   int rxPosted) {
        // §3.3 "MTU Size": the agreed value is the lesser of both capabilities; §2.2.2.2.6 read window likewise
        long mtu = Math.min(local.mtu(), request.mtuSize());
        int window = Math.min(local.rdmaReadWindow(), request.rdmaReadWindow());
        // §3.6: a ConnectAccept MAY contain the CRC option only if the ConnectRequest contained it
        boolean crc = local.crcOption() && request.crcOption();
        ViCeHeader ce = new ViCeHeader(local.callingAttributes(p2p), mtu, localDiscriminator, window,
                request.callingDiscriminator(), crc ? List.of(ViCeOption.CRC_OPTION) : List.of(), crc);
        return ViSegment.builder(ViSegmentType.CONNECT_ACCEPT).endOfMessage(true).rxDescriptorsPosted(rxPosted)
                .ceHeader(ce).build();
    }

    /** Checks a received ConnectAccept against what we proposed; returns the violation, or null. */
    static String acceptViolation(VitcpConfig local, boolean p2p, ViCeHeader accept) {
        String r = rejectReason(local, p2p, accept);
        if (r != null) {
            return r;
        }
        if (accept.mtuSize() > local.mtu()) {
            return "agreed MTU " + accept.mtuSize() + " exceeds the proposed " + local.mtu();
        }
        if (accept.rdmaReadWindow() > local.rdmaReadWindow()) {
            return "agreed RDMA Read Window " + accept.rdmaReadWindow() + " exceeds the proposed "
                    + local.rdmaReadWindow();
        }
        if (accept.crcOption() && !local.crcOption()) {
            return "ConnectAccept carries the CRC option the ConnectRequest did not (§3.6)";
        }
        return null;
    }

    static VitcpConnection connection(boolean active, VitcpConfig local, ViCeHeader sent, ViSegment received) {
        ViCeHeader r = received.ceHeader();
        ViCeHeader accept = active ? r : sent;
        return new VitcpConnection(active, local.reliabilityLevel(), (int) accept.mtuSize(), accept.rdmaReadWindow(),
                sent.crcOption() && r.crcOption(), local.crcMode(), sent.callingAttributes(), r.callingAttributes(),
                sent.callingDiscriminator(), r.callingDiscriminator(), received.rxDescriptorsPosted(),
                r.hasOption(ViCeOption.URGENT_MARKER));
    }

    /** ConnectReject or ConnectNoMatch, with a trailer when the request carried the CRC option and we opt in. */
    static ViSegment refusal(ViSegmentType type, VitcpConfig local, ViCeHeader request) {
        boolean trailer = local.crcOnRejectAndNoMatch() && request != null && request.crcOption();
        return ViSegment.builder(type).endOfMessage(true).trailer(trailer).build();
    }

    static Object describe(ChannelHandlerContext ctx) {
        return PeerAddress.of(ctx);
    }
}
