package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViPayloadPlacement;
import dev.iwarp.vitcp.ViRdmaHeader;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.ViRemoteErrorCode;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.VitcpConnection;
import io.netty.buffer.ByteBuf;

/**
 * Where a data segment's payload goes, decided from its headers before a payload octet is there, so that the
 * segment decoder reads the payload straight into it (as siw places from the socket buffer): the checks
 * {@link ViEndpointHandler} and {@link ViReceiver} make when the segment arrives, made here without changing
 * anything, and the memory they would copy the payload to. The segment itself is processed when it arrives, after
 * its CRC, as any other: nothing it reports (Message ACK, Rx Descriptors Posted) and no descriptor it consumes is
 * taken on the word of a header whose CRC is still unchecked.
 *
 * <p>Every check that would refuse the segment or its message answers null, as does a destination the decoder cannot
 * read into (a range across data segments of a scatter list, heap memory): the segment is then received whole and
 * handled as before, so nothing of a refused segment is placed. Unreliable VIs read only Sends into place: a
 * CRC-failed RDMA Write is not placed there (its header may be corrupt and the VI goes on), while a Send's
 * descriptor completes with a transport error either way (draft-dicecco-vitcp-01 §3.6). At the reliable levels a
 * CRC error closes the VI, and the payload read before the CRC was known stays where its header's checks allowed
 * it (§3.6 action 2: the data is delivered with status transport error).
 *
 * <p>Part of {@link ViReceiver}; on the channel's event loop.
 */
final class ViPlacementCheck implements ViPayloadPlacement {
    private final ViEndpointHandler owner;
    private final ViReceiver rx;
    private final VitcpConnection conn;
    private final ViProtectionDomain pd;

    ViPlacementCheck(ViEndpointHandler owner, ViReceiver rx, ViProtectionDomain pd) {
        this.owner = owner;
        this.rx = rx;
        this.conn = owner.connection();
        this.pd = pd;
    }

    @Override
    public ByteBuf payloadDestination(ViSegment h, int payloadLength) {
        if (owner.isFailed() || payloadLength > conn.mtu()) {
            return null; // §3.3: the agreed MTU bounds a segment's payload
        }
        if (owner.reliableReception() && ViRemoteErrorCode.viErrorType(h.remoteErrorCode()) != 0) {
            return null; // the peer reports an error in our message: the VI breaks on this segment (§3.2)
        }
        boolean unreliable = conn.reliabilityLevel() == ViReliabilityLevel.UNRELIABLE;
        return switch (h.type()) {
            case SEND -> send(h, payloadLength);
            case RDMA_WRITE -> unreliable ? null : rdmaWrite(h, payloadLength);
            case RDMA_READ_RESPONSE -> unreliable ? null : readResponse(h, payloadLength);
            default -> null;
        };
    }

    /** A Send's segment: into the posted receive its message fills, at the Data Offset. */
    private ByteBuf send(ViSegment h, int length) {
        ViInMessage m = rx.inbound();
        ViRecvRequest recv;
        long offset;
        if (m == null) {
            // §2.2.2.2.3, §3.2: a message starts at Data Offset 0 with the next message number
            if (h.dataOffset() != 0 || !rx.expects(h.messageNumber())) {
                return null;
            }
            recv = rx.queue().peek(); // consumed when the segment arrives
            offset = 0;
            if (recv == null) {
                return null; // VDE: no receive descriptor posted
            }
        } else {
            if (!m.continuedBy(h) || m.error != 0) {
                return null;
            }
            recv = m.recv;
            offset = m.offset;
        }
        if (offset + length > recv.length) {
            return null; // VDE: longer than the receive descriptor
        }
        return ScatterGather.destination(recv.segments, offset, length);
    }

    /** An RDMA Write's segment: into the region its RDMA Header names, at the Data Offset. */
    private ByteBuf rdmaWrite(ViSegment h, int length) {
        ViInMessage m = rx.inbound();
        ViMemoryRegion region;
        long address;
        long rdmaLength;
        long offset;
        if (m == null) {
            if (h.dataOffset() != 0 || !rx.expects(h.messageNumber())) {
                return null;
            }
            ViRdmaHeader r = h.rdmaHeader();
            region = pd.region(r.memoryHandle());
            if (ViReceiver.targetRefused(region, r, ViAccess.RDMA_WRITE, conn.localRdmaWriteEnable()) != null) {
                return null; // MPE
            }
            address = r.rdmaAddress();
            rdmaLength = r.rdmaLengthUnsigned();
            offset = 0;
        } else {
            if (!m.continuedBy(h) || m.error != 0) {
                return null;
            }
            region = m.region;
            address = m.rdmaAddress;
            rdmaLength = m.rdmaLength;
            offset = m.offset;
        }
        if (offset + length > rdmaLength) {
            return null; // MPE: beyond its RDMA Length
        }
        return ScatterGather.destination(region, (int) (address - region.address() + offset), length);
    }

    /** A Read Response's segment: into our oldest outstanding RDMA Read's local data segments, at the Data Offset. */
    private ByteBuf readResponse(ViSegment h, int length) {
        ViTransmitter.OutMessage m = owner.tx().firstOutstandingRead();
        if (m == null || m.messageNumber != h.messageNumber() || h.dataOffset() != (int) m.inOffset
                || m.inOffset + length > m.length) {
            return null; // out of sequence: refused when it arrives
        }
        return ScatterGather.destination(m.request.segments, m.inOffset, length);
    }
}
