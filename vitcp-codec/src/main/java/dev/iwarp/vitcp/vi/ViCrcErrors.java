package dev.iwarp.vitcp.vi;

import dev.iwarp.framing.PeerAddress;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.ViRemoteErrorCode;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A segment whose trailer CRC did not match, per draft-dicecco-vitcp-01 §3.6 action 2: the data is delivered with
 * status transport error; at Reliable Delivery and Reliable Reception the connection is closed at once (Reliable
 * Reception first sends a Message ACK reporting an Unrecoverable Transport Error), at Unreliable it goes on. A
 * payload the decoder read into place before the CRC was known is there already (it went only where the segment's
 * header checks allowed); one received whole is copied as for any segment, except an Unreliable RDMA Write's, whose
 * header may be corrupt. Part of {@link ViReceiver}; on the channel's event loop.
 */
final class ViCrcErrors {
    /** The handler's logger: the VI logs as one. */
    private static final Logger log = LoggerFactory.getLogger(ViEndpointHandler.class);

    private final ViEndpointHandler owner;
    private final ViReceiver rx;
    private final ViEndpoint endpoint;

    ViCrcErrors(ViEndpointHandler owner, ViReceiver rx, ViEndpoint endpoint) {
        this.owner = owner;
        this.rx = rx;
        this.endpoint = endpoint;
    }

    void segment(ViSegment s) {
        boolean unreliable = owner.connection().reliabilityLevel() == ViReliabilityLevel.UNRELIABLE;
        log.warn("VI/TCP {}: CRC error in {} 0x{} ({})", PeerAddress.of(owner.context()), s.type(),
                Integer.toHexString(s.messageNumber()), unreliable ? "continuing, Unreliable" : "closing");
        if (s.type() == ViSegmentType.SEND) {
            if (unreliable) {
                rx.messageSegment(s, true);
                return;
            }
            // deliver what arrived with status transport error
            ViInMessage m = rx.inbound();
            ViRecvRequest recv = m != null && m.type == ViSegmentType.SEND ? m.recv
                    : (s.dataOffset() == 0 ? rx.queue().next() : null);
            long offset = m != null && m.type == ViSegmentType.SEND ? m.offset : 0;
            if (recv != null) {
                if (!s.placed()) { // a placed payload is there already
                    ScatterGather.scatter(recv.segments, offset, s.content().slice(s.content().readerIndex(),
                            (int) Math.max(0, Math.min(s.content().readableBytes(), recv.length - offset))));
                }
                endpoint.recvCq().add(new ViCompletion(recv.wrId, ViOpcode.RECV, ViStatus.TRANSPORT_ERROR,
                        offset + s.content().readableBytes(), s.immediateData(), s.immediateDataValid()));
            }
            rx.dropInbound();
        } else if (unreliable) {
            if (s.type() == ViSegmentType.RDMA_WRITE) {
                rx.messageSegment(s, true); // not placed, the message completes in error
            } else if (s.type() == ViSegmentType.RDMA_READ_RESPONSE) {
                rx.readResponse(s, true);
            }
            return; // a corrupt NOP is ignored
        } else if (s.type() == ViSegmentType.RDMA_READ_RESPONSE) {
            ViTransmitter.OutMessage r = owner.tx().firstOutstandingRead();
            if (r != null && r.messageNumber == s.messageNumber()) {
                owner.tx().removeFirstOutstandingRead();
                owner.complete(r.request, ViStatus.TRANSPORT_ERROR, r.inOffset);
            }
        }
        owner.fail("CRC error", ViRemoteErrorCode.UTE, s.messageNumber(), ViStatus.FLUSHED);
    }
}
