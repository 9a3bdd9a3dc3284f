package dev.iwarp.vitcp.vi;

import dev.iwarp.framing.PeerAddress;
import dev.iwarp.vitcp.ViRdmaHeader;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.ViRemoteErrorCode;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpConnection;
import dev.iwarp.vitcp.VitcpProtocolException;
import dev.iwarp.vitcp.VitcpProtocolException.Violation;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The receive half of a connected VI (as Linux siw's qp_rx): reassembles the peer's messages into receive
 * descriptors and registered memory, checks message order (draft §2.2.2.2.3, §3.2), hands RDMA Read Requests to
 * the transmit half, places Read Responses, applies the CRC error rules per reliability level (§3.6) and keeps what
 * every segment we send reports back: Message ACK and Rx Descriptors Posted (§3.2).
 * Its parts: the receive queue ({@link ViReceiveQueue}), the message being received ({@link ViInMessage}) and the
 * answer to the segment decoder's question where a payload goes before it arrives ({@link ViPlacementCheck}), and
 * the rule for a segment with a bad CRC ({@link ViCrcErrors}); a
 * segment whose payload was read there ({@link ViSegment#placed()}) is handled as any other, minus the copy.
 * Confined to the channel's event loop; {@link ViEndpointHandler} owns it.
 */
final class ViReceiver {
    /** The handler's logger: the VI logs as one. */
    private static final Logger log = LoggerFactory.getLogger(ViEndpointHandler.class);

    private final ViEndpointHandler owner;
    private final ViEndpoint endpoint;
    private final VitcpConnection conn;
    private final ViProtectionDomain pd;
    private final boolean reliableReception;
    private final ViReceiveQueue queue;
    private final ViPlacementCheck placement;
    private final ViCrcErrors crcErrors;

    private ViInMessage inbound;
    private boolean expectedKnown;
    private int expectedMessageNumber;
    private int lastGoodMessage;
    private boolean ackDirty;
    private final PeerCounts peerCounts = new PeerCounts();

    ViReceiver(ViEndpointHandler owner, ViEndpoint endpoint) {
        this.owner = owner;
        this.endpoint = endpoint;
        this.conn = owner.connection();
        this.pd = endpoint.protectionDomain();
        this.reliableReception = owner.reliableReception();
        this.queue = new ViReceiveQueue(owner, endpoint);
        this.placement = new ViPlacementCheck(owner, this, pd);
        this.crcErrors = new ViCrcErrors(owner, this, endpoint);
    }

    private ChannelHandlerContext ctx() {
        return owner.context();
    }

    /** Where payloads go before they arrive: bound to the segment decoder once the VI is connected. */
    ViPlacementCheck placement() {
        return placement;
    }

    ViReceiveQueue queue() {
        return queue;
    }

    /** The Send or RDMA Write being received, or null between messages. */
    ViInMessage inbound() {
        return inbound;
    }

    /** Takes the receives posted before the VI connected. */
    void attach(List<ViRecvRequest> prePosted) {
        queue.attach(prePosted);
    }

    /** From any thread: in effect at once, taken on the event loop by {@link #takePosted}. */
    void postRecvFromAnyThread(ViRecvRequest r) {
        queue.postFromAnyThread(r);
    }

    /** Takes the receives posted from other threads, in order. On the event loop. */
    void takePosted() {
        queue.takePosted();
    }

    void postRecv(ViRecvRequest r) {
        queue.post(r);
    }

    /** Fills the fields every segment carries (§3.2): Message ACK and Rx Descriptors Posted. */
    void stamp(ViSegment.Builder b) {
        b.messageAck(reliableReception ? lastGoodMessage : 0).rxDescriptorsPosted(queue.reportRxPosted());
        ackDirty = false;
    }

    /** Whether the peer is owed a Message ACK or Rx Descriptors Posted (draft §3.2 "Notes on NOP"). */
    boolean nopNeeded() {
        return ackDirty || (queue.rxPostedDirty() && conn.remoteDescriptorFlowControl());
    }

    /** What the peer did to us so far; read it on the event loop (or once the channel closed). */
    ViPeerActivity peerActivity() {
        return peerCounts.snapshot();
    }

    int localRxPosted() {
        return queue.localRxPosted();
    }

    int lastGoodMessage() {
        return lastGoodMessage;
    }

    /** Whether {@code messageNumber} is the next message's number (§3.2 "Message Number"); changes nothing. */
    boolean expects(int messageNumber) {
        return !expectedKnown || messageNumber == expectedMessageNumber;
    }

    private void checkMessageNumber(int messageNumber) {
        // §3.2 "Message Number": messages are numbered sequentially (the first one may be any number)
        if (!expects(messageNumber)) {
            throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer sent message 0x"
                    + Integer.toHexString(messageNumber) + ", expected 0x" + Integer.toHexString(expectedMessageNumber));
        }
        expectedKnown = true;
        expectedMessageNumber = messageNumber + 1;
    }

    /** A Send or RDMA Write segment. {@code transportError}: CRC error on an Unreliable connection (§3.6). */
    void messageSegment(ViSegment s, boolean transportError) {
        ViInMessage m = inbound;
        if (m == null) {
            if (s.dataOffset() != 0) {
                throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer started message 0x"
                        + Integer.toHexString(s.messageNumber()) + " at Data Offset " + s.dataOffset());
            }
            checkMessageNumber(s.messageNumber());
            m = new ViInMessage(s.type(), s.messageNumber());
            inbound = m;
            if (s.type() == ViSegmentType.SEND) {
                m.recv = queue.next();
                if (m.recv == null) {
                    m.error = ViRemoteErrorCode.VDE; // no receive descriptor posted
                    m.errorText = "Send arrived with no receive descriptor posted";
                }
            } else {
                checkRdmaTarget(m, s.rdmaHeader(), ViAccess.RDMA_WRITE, conn.localRdmaWriteEnable());
            }
        } else if (!m.continuedBy(s)) {
            // §2.2.2.2.3: all segments of one message before the next is started
            throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer sent " + s.type() + " 0x"
                    + Integer.toHexString(s.messageNumber()) + " offset " + Integer.toUnsignedString(s.dataOffset())
                    + " inside " + m.type + " 0x" + Integer.toHexString(m.messageNumber) + " at offset " + m.offset);
        }
        m.transmitError |= s.transmitError();
        m.transportError |= transportError;
        if (s.immediateDataValid()) {
            m.immediateDataValid = true;
            m.immediateData = s.immediateData();
        }
        ByteBuf payload = s.content();
        int len = payload.readableBytes();
        if (m.error == 0 && !transportErrorDrop(m, s)) {
            if (m.type == ViSegmentType.SEND) {
                if (m.offset + len > m.recv.length) {
                    m.error = ViRemoteErrorCode.VDE;
                    m.errorText = "Send longer than the receive descriptor (" + m.recv.length + ")";
                } else if (!(s.placed() ? ScatterGather.valid(m.recv.segments, m.offset, len)
                        : ScatterGather.scatter(m.recv.segments, m.offset, payload))) {
                    m.error = ViRemoteErrorCode.VDE;
                    m.errorText = "receive descriptor's region was deregistered";
                }
            } else if (m.offset + len > m.rdmaLength) {
                m.error = ViRemoteErrorCode.MPE;
                m.errorText = "RDMA Write beyond its RDMA Length";
            } else if (!(s.placed() ? m.region.isValid() : ScatterGather.place(m.region,
                    (int) (m.rdmaAddress - m.region.address() + m.offset), payload, payload.readerIndex(), len))) {
                m.error = ViRemoteErrorCode.MPE;
                m.errorText = "region deregistered during RDMA Write";
            } else {
                peerCounts.writeOctets += len;
            }
        }
        m.offset += len;
        if (m.error != 0 && conn.reliabilityLevel() != ViReliabilityLevel.UNRELIABLE) {
            inbound = null;
            remoteError(m);
            return;
        }
        if (s.endOfMessage()) {
            inbound = null;
            finish(m);
        }
    }

    /** On Unreliable, an RDMA Write segment with a CRC error is not placed (its header may be corrupt). */
    private static boolean transportErrorDrop(ViInMessage m, ViSegment s) {
        return s.crcError() && m.type == ViSegmentType.RDMA_WRITE;
    }

    private void checkRdmaTarget(ViInMessage m, ViRdmaHeader h, ViAccess access, boolean viEnabled) {
        ViMemoryRegion region = pd.region(h.memoryHandle());
        m.rdmaAddress = h.rdmaAddress();
        m.rdmaLength = h.rdmaLengthUnsigned();
        m.region = region;
        String refused = targetRefused(region, h, access, viEnabled);
        if (refused != null) {
            m.error = ViRemoteErrorCode.MPE;
            m.errorText = refused;
        }
    }

    /** Why {@code region} (the one {@code h} names) is no target for {@code access}, or null if it is. */
    static String targetRefused(ViMemoryRegion region, ViRdmaHeader h, ViAccess access, boolean viEnabled) {
        if (!viEnabled) {
            return access + " not enabled on this VI";
        }
        if (region == null || !region.allows(access) || !region.contains(h.rdmaAddress(), h.rdmaLengthUnsigned())) {
            // nothing is placed outside a registered region with the right access
            return access + " to 0x" + Long.toHexString(h.rdmaAddress()) + "+" + h.rdmaLengthUnsigned() + " handle 0x"
                    + Integer.toHexString(h.memoryHandle()) + " outside any registered region allowing it";
        }
        return null;
    }

    private void finish(ViInMessage m) {
        if (m.error != 0) {
            // Unreliable: the message is dropped, its descriptor (if any) completes in error, the VI continues
            log.info("VI/TCP {}: dropping message 0x{}: {}", PeerAddress.of(ctx()),
                    Integer.toHexString(m.messageNumber), m.errorText);
            if (m.recv != null) {
                recvCompletion(m, localStatus(m.error));
            }
            return;
        }
        ViStatus status = m.transportError ? ViStatus.TRANSPORT_ERROR
                : m.transmitError ? ViStatus.TRANSMIT_ERROR : ViStatus.SUCCESS;
        if (m.type == ViSegmentType.RDMA_WRITE && m.immediateDataValid) {
            // an RDMA Write with immediate data consumes a receive descriptor [VIAR]
            m.recv = queue.next();
            if (m.recv == null) {
                m.error = ViRemoteErrorCode.VDE;
                m.errorText = "RDMA Write with immediate data and no receive descriptor posted";
                if (conn.reliabilityLevel() != ViReliabilityLevel.UNRELIABLE) {
                    remoteError(m);
                }
                return;
            }
        }
        if (m.recv != null) {
            recvCompletion(m, status);
        }
        if (!m.transportError) {
            peerCounts.messageDone(m.type == ViSegmentType.SEND, m.offset);
        }
        messageReceived(m.messageNumber);
    }

    private void recvCompletion(ViInMessage m, ViStatus status) {
        ViOpcode op = m.type == ViSegmentType.SEND ? ViOpcode.RECV : ViOpcode.RECV_RDMA_WRITE_WITH_IMMEDIATE;
        long bytes = m.type == ViSegmentType.SEND ? m.offset : 0;
        endpoint.recvCq().add(new ViCompletion(m.recv.wrId, op, status, bytes, m.immediateData, m.immediateDataValid));
    }

    private void messageReceived(int messageNumber) {
        // §3.2 "Message ACK": the last message received without error, after its completion is written
        lastGoodMessage = messageNumber;
        if (reliableReception) {
            ackDirty = true;
        }
    }

    void readRequest(ViSegment s) {
        if (inbound != null) {
            // §2.2.2.2.3: only Read Responses may interleave with the segments of another message
            throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer sent RDMA Read Request 0x"
                    + Integer.toHexString(s.messageNumber()) + " inside " + inbound.type + " 0x"
                    + Integer.toHexString(inbound.messageNumber));
        }
        checkMessageNumber(s.messageNumber());
        ViInMessage m = new ViInMessage(s.type(), s.messageNumber());
        if (conn.reliabilityLevel() == ViReliabilityLevel.UNRELIABLE) {
            throw new VitcpProtocolException(Violation.UNEXPECTED_SEGMENT, "RDMA Read Request on an Unreliable VI");
        }
        int queued = owner.tx().queuedReadResponses();
        if (queued >= conn.rdmaReadWindow()) {
            // §2.2.2.2.6: the negotiated number of outstanding RDMA Reads is a per-VI limit
            throw new VitcpProtocolException(Violation.RDMA_READ_WINDOW_EXCEEDED, "peer has " + (queued + 1)
                    + " RDMA Reads outstanding, window " + conn.rdmaReadWindow());
        }
        checkRdmaTarget(m, s.rdmaHeader(), ViAccess.RDMA_READ, conn.localRdmaReadEnable());
        if (m.error != 0) {
            remoteError(m);
            return;
        }
        owner.tx().queueReadResponse(s.messageNumber(), m.region, m.rdmaAddress, m.rdmaLength);
        peerCounts.readAnswered(m.rdmaLength);
        messageReceived(s.messageNumber());
    }

    void readResponse(ViSegment s, boolean transportError) {
        ViTransmitter.OutMessage m = owner.tx().firstOutstandingRead();
        if (m == null || m.messageNumber != s.messageNumber()) {
            throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer sent Read Response 0x"
                    + Integer.toHexString(s.messageNumber()) + " for no outstanding RDMA Read");
        }
        int len = s.content().readableBytes();
        if (s.dataOffset() != (int) m.inOffset || m.inOffset + len > m.length) {
            throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer sent Read Response offset "
                    + Integer.toUnsignedString(s.dataOffset()) + " length " + len + ", expected offset " + m.inOffset
                    + " of " + m.length);
        }
        m.transmitError |= s.transmitError();
        m.transportError |= transportError;
        if (!transportError && !(s.placed() ? ScatterGather.valid(m.request.segments, m.inOffset, len)
                : ScatterGather.scatter(m.request.segments, m.inOffset, s.content()))) {
            m.localError = true; // local region deregistered meanwhile
        }
        m.inOffset += len;
        if (s.endOfMessage()) {
            if (m.inOffset != m.length) {
                throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "Read Response ended after "
                        + m.inOffset + " of " + m.length + " octets");
            }
            owner.tx().removeFirstOutstandingRead();
            // §3.2: RDMA Reads are completed upon receipt of a valid response
            owner.complete(m.request, m.transportError ? ViStatus.TRANSPORT_ERROR : m.transmitError
                    ? ViStatus.TRANSMIT_ERROR : m.localError ? ViStatus.LOCAL_PROTECTION_ERROR : ViStatus.SUCCESS,
                    m.length);
        }
    }

    /** Status of our receive descriptor for an error we detected in the peer's message. */
    private static ViStatus localStatus(int viErrorType) {
        return (viErrorType & ViRemoteErrorCode.MPE) != 0 ? ViStatus.LOCAL_PROTECTION_ERROR
                : ViStatus.LOCAL_LENGTH_ERROR;
    }

    /** A protection or descriptor error in a message the peer sent, on a reliable VI. */
    private void remoteError(ViInMessage m) {
        log.warn("VI/TCP {}: message 0x{} in error ({}): {}", PeerAddress.of(ctx()),
                Integer.toHexString(m.messageNumber), ViRemoteErrorCode.describe(m.error), m.errorText);
        if (m.recv != null) {
            endpoint.recvCq().add(new ViCompletion(m.recv.wrId, m.type == ViSegmentType.SEND ? ViOpcode.RECV
                    : ViOpcode.RECV_RDMA_WRITE_WITH_IMMEDIATE, localStatus(m.error), m.offset, 0, false));
        }
        owner.fail(m.errorText, m.error, m.messageNumber, ViStatus.FLUSHED);
    }

    /** A segment whose trailer CRC did not match: draft §3.6's rule for the VI's reliability level. */
    void crcError(ViSegment s) {
        crcErrors.segment(s);
    }

    /** The message being received ends here (a CRC error ended it). */
    void dropInbound() {
        inbound = null;
    }

    /** Completes every receive descriptor with {@code status}. */
    void flush(ViStatus status) {
        queue.takePosted();
        if (inbound != null && inbound.recv != null) {
            endpoint.recvCq().add(new ViCompletion(inbound.recv.wrId, ViOpcode.RECV, status, 0, 0, false));
        }
        inbound = null;
        queue.flush(status);
    }
}
