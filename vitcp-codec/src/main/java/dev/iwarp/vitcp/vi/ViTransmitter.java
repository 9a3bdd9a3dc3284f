package dev.iwarp.vitcp.vi;

import dev.iwarp.framing.PeerAddress;
import dev.iwarp.vitcp.ViRdmaHeader;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.ViRemoteErrorCode;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpConnection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The transmit half of a connected VI (as Linux siw's qp_tx): segments our messages to the agreed MTU,
 * interleaves RDMA Read Response segments with them (draft §2.2.2.2.3), keeps descriptor flow control and the RDMA
 * Read Window, and completes transmit descriptors, at Reliable Reception on the peer's Message ACK (§3.2).
 * Confined to the channel's event loop; {@link ViEndpointHandler} owns it.
 */
final class ViTransmitter {
    /** The handler's logger: the VI logs as one. */
    private static final Logger log = LoggerFactory.getLogger(ViEndpointHandler.class);
    /** Segments written between flushes. */
    private static final int FLUSH_EVERY = 16;

    private final ViEndpointHandler owner;
    private final ViProtectionDomain pd;
    private final VitcpConnection conn;
    private final int mtu;
    private final boolean reliableReception;

    /** draft §3.2 "Message Number": sequential; this implementation starts at 1 (CE segments carry 0). */
    private int nextMessageNumber = 1;
    private int lastMessageNumberSent;
    private final ArrayDeque<OutMessage> pendingSends = new ArrayDeque<>();
    private OutMessage current;
    private final ArrayDeque<OutMessage> awaitingAck = new ArrayDeque<>();
    private final ArrayDeque<OutMessage> outstandingReads = new ArrayDeque<>();
    /** Peer's Rx Descriptors Posted (mod 2^16) and how many of them our messages consumed (mod 2^16), §3.2. */
    private int peerRxPosted;
    private int peerRxConsumed;
    private boolean pumpScheduled;

    // ---- responder side (RDMA Read Requests received, §2.2.2.2.6)
    private final ArrayDeque<ReadResponse> responses = new ArrayDeque<>();
    private ReadResponse currentResponse;

    ViTransmitter(ViEndpointHandler owner, ViProtectionDomain pd) {
        this.owner = owner;
        this.pd = pd;
        this.conn = owner.connection();
        this.mtu = conn.mtu();
        this.reliableReception = owner.reliableReception();
        this.peerRxPosted = conn.remoteRxDescriptorsPosted();
    }

    private ChannelHandlerContext ctx() {
        return owner.context();
    }

    void postSend(ViSendRequest r) {
        if (owner.isFailed()) {
            owner.complete(r, ViStatus.FLUSHED, 0);
            return;
        }
        if (!ScatterGather.allValid(r.segments, pd)) {
            owner.complete(r, ViStatus.LOCAL_PROTECTION_ERROR, 0);
            return;
        }
        if (r.length() > 0xFFFFFFFFL) {
            // draft §3.2 "Data Offset": messages of up to 4GB
            owner.complete(r, ViStatus.LOCAL_LENGTH_ERROR, 0);
            return;
        }
        if (r.opcode == ViOpcode.RDMA_READ && conn.reliabilityLevel() == ViReliabilityLevel.UNRELIABLE) {
            // [VIAR]: RDMA Read needs a reliable service
            owner.complete(r, ViStatus.NOT_SUPPORTED, 0);
            return;
        }
        pendingSends.add(new OutMessage(r));
        schedulePump();
    }

    void schedulePump() {
        if (!pumpScheduled) {
            pumpScheduled = true;
            ctx().executor().execute(this::pump);
        }
    }

    private int rxAvailableAtPeer() {
        // draft §3.2: "Rx Descriptors Posted" minus what our messages consumed, modulo 2^16. While we hold sends we
        // never consume more than was posted, so the difference is 0..65535 (65536 outstanding would read as 0).
        return (peerRxPosted - peerRxConsumed) & 0xFFFF;
    }

    void pump() {
        pumpScheduled = false;
        if (owner.isFailed() || !ctx().channel().isActive()) {
            return;
        }
        int written = 0;
        boolean any = false;
        while (ctx().channel().isWritable()) {
            // draft §2.2.2.2.3: Read Response segments may be interleaved with segments of other messages
            boolean progress = writeResponseSegment();
            progress |= writeMessageSegment();
            if (!progress) {
                break;
            }
            any = true;
            if (++written % FLUSH_EVERY == 0) {
                ctx().flush();
            }
        }
        if (!any && owner.rx().nopNeeded()) {
            // draft §3.2 "Notes on NOP": convey Message ACK / Rx Descriptors Posted when idle
            write(ViSegment.builder(ViSegmentType.NOP).messageNumber(lastMessageNumberSent), Unpooled.EMPTY_BUFFER,
                    null);
            any = true;
        }
        if (any) {
            ctx().flush();
        }
    }

    /** Fills the fields every segment carries (§3.2) and writes it. */
    private void write(ViSegment.Builder b, ByteBuf payload, ChannelFutureListener listener) {
        owner.rx().stamp(b);
        if (listener != null) {
            ctx().write(b.build(payload)).addListener(listener);
        } else {
            ctx().write(b.build(payload), ctx().voidPromise());
        }
    }

    private boolean writeMessageSegment() {
        OutMessage m = current;
        if (m == null) {
            m = pendingSends.peek();
            if (m == null) {
                return false;
            }
            ViSendRequest r = m.request;
            if (r.opcode == ViOpcode.RDMA_READ && outstandingReads.size() >= conn.rdmaReadWindow()) {
                return false; // §2.2.2.2.6: the negotiated number of outstanding RDMA Reads
            }
            if (r.consumesReceiveDescriptor() && conn.localDescriptorFlowControl() && rxAvailableAtPeer() <= 0) {
                return false; // §3.3 Descriptor Flow Control: hold until the peer has posted
            }
            pendingSends.poll();
            m.messageNumber = nextMessageNumber++;
            if (r.consumesReceiveDescriptor()) {
                peerRxConsumed = (peerRxConsumed + 1) & 0xFFFF;
            }
            if (r.opcode == ViOpcode.RDMA_READ) {
                lastMessageNumberSent = m.messageNumber;
                outstandingReads.add(m);
                write(ViSegment.builder(ViSegmentType.RDMA_READ_REQUEST).endOfMessage(true)
                        .messageNumber(m.messageNumber)
                        .rdmaHeader(new ViRdmaHeader(r.remoteAddress, r.remoteHandle, (int) m.length)),
                        Unpooled.EMPTY_BUFFER, null);
                return true;
            }
            current = m;
        }
        ViSendRequest r = m.request;
        int n = (int) Math.min(mtu, m.length - m.offset);
        boolean eom = m.offset + n == m.length;
        ByteBuf payload = ScatterGather.gather(ctx().alloc(), r.segments, m.offset, n);
        boolean transmitError = false;
        if (payload == null) {
            // §2.2.2.2.5: cannot read the original data: pad and set Transmit Error
            payload = ctx().alloc().buffer(n).writeZero(n);
            transmitError = true;
            m.transmitError = true;
        }
        ViSegment.Builder b = ViSegment.builder(r.opcode == ViOpcode.SEND ? ViSegmentType.SEND
                        : ViSegmentType.RDMA_WRITE)
                .endOfMessage(eom).transmitError(transmitError).dataOffset((int) m.offset)
                .messageNumber(m.messageNumber)
                // §3.2 "Immediate Data": correct in every segment; zero unless Immediate Data Valid
                .immediateDataValid(r.immediateDataValid).immediateData(r.immediateDataValid ? r.immediateData : 0);
        if (r.opcode == ViOpcode.RDMA_WRITE) {
            b.rdmaHeader(new ViRdmaHeader(r.remoteAddress, r.remoteHandle, (int) m.length));
        }
        m.offset += n;
        if (!eom) {
            write(b, payload, null);
            return true;
        }
        current = null;
        lastMessageNumberSent = m.messageNumber;
        final OutMessage done = m;
        if (reliableReception) {
            // §3.2 "Message ACK": at Reliable Reception transmit descriptors complete on the peer's ACK
            awaitingAck.add(done);
            write(b, payload, null);
        } else {
            write(b, payload, f -> {
                if (!f.isSuccess()) {
                    owner.transmitFailed(f.cause());
                }
                owner.complete(done.request, f.isSuccess()
                        ? (done.transmitError ? ViStatus.TRANSMIT_ERROR : ViStatus.SUCCESS) : ViStatus.FLUSHED,
                        done.length);
            });
        }
        return true;
    }

    private boolean writeResponseSegment() {
        ReadResponse rr = currentResponse;
        if (rr == null) {
            rr = responses.poll();
            if (rr == null) {
                return false;
            }
            currentResponse = rr;
        }
        int n = (int) Math.min(mtu, rr.length - rr.offset);
        boolean eom = rr.offset + n == rr.length;
        ByteBuf payload = rr.region.isValid() ? responsePayload(rr, n) : null;
        boolean transmitError = payload == null;
        if (transmitError) {
            payload = ctx().alloc().buffer(n).writeZero(n); // §2.2.2.2.5
        }
        // §3.2 "Message Number": a Read Response carries the number of its request
        write(ViSegment.builder(ViSegmentType.RDMA_READ_RESPONSE).endOfMessage(eom).transmitError(transmitError)
                .dataOffset((int) rr.offset).messageNumber(rr.messageNumber), payload, null);
        rr.offset += n;
        if (eom) {
            currentResponse = null;
        }
        return true;
    }


    /**
     * The next {@code n} octets of a Read Response from its source region, or null when the region's memory is gone
     * (deregistered concurrently, by another thread).
     */
    private ByteBuf responsePayload(ReadResponse rr, int n) {
        if (n == 0) {
            return Unpooled.EMPTY_BUFFER;
        }
        int index = (int) (rr.address - rr.region.address() + rr.offset);
        ByteBuf source = rr.region.buffer();
        if (!conn.crcEnabled()) {
            try {
                return source.retainedSlice(index, n);
            } catch (io.netty.util.IllegalReferenceCountException e) {
                return null;
            }
        }
        // with the trailer CRC on, the source may be written meanwhile (by a peer's RDMA Write): the CRC must cover
        // exactly the octets sent (§3.5), so the segment carries a copy
        ByteBuf copy = ctx().alloc().directBuffer(n, n);
        try {
            return copy.writeBytes(source, index, n);
        } catch (io.netty.util.IllegalReferenceCountException e) {
            copy.release();
            return null;
        }
    }

    /** Reliable Reception: complete transmit descriptors up to the ACK; handle a Remote Error Code (§3.2). */
    void messageAck(int ack, int viErrorType) {
        while (!awaitingAck.isEmpty()) {
            OutMessage m = awaitingAck.peek();
            if (m.messageNumber - ack > 0) {
                break;
            }
            awaitingAck.poll();
            if (viErrorType != 0 && m.messageNumber == ack) {
                owner.complete(m.request, errorStatus(viErrorType), 0);
            } else {
                owner.complete(m.request, m.transmitError ? ViStatus.TRANSMIT_ERROR : ViStatus.SUCCESS, m.length);
            }
        }
        if (viErrorType != 0) {
            for (OutMessage r : outstandingReads) {
                if (r.messageNumber == ack) {
                    outstandingReads.remove(r);
                    owner.complete(r.request, errorStatus(viErrorType), 0);
                    break;
                }
            }
            // §3.2: "Message ACK is invalid on subsequent messages": the VI is broken
            log.warn("VI/TCP {}: peer reported {} on message 0x{} (IS error code {})", PeerAddress.of(ctx()),
                    ViRemoteErrorCode.describe(viErrorType), Integer.toHexString(ack),
                    ViRemoteErrorCode.isErrorCode(viErrorType));
            owner.fail("peer reported " + ViRemoteErrorCode.describe(viErrorType), 0, 0, ViStatus.FLUSHED);
        }
    }

    private static ViStatus errorStatus(int viErrorType) {
        if ((viErrorType & ViRemoteErrorCode.UTE) != 0) {
            return ViStatus.TRANSPORT_ERROR;
        }
        if ((viErrorType & ViRemoteErrorCode.MPE) != 0) {
            return ViStatus.REMOTE_PROTECTION_ERROR;
        }
        return ViStatus.REMOTE_DESCRIPTOR_ERROR;
    }


    /** Records the peer's Rx Descriptors Posted, carried by every segment (§3.2). */
    void peerRxPosted(int rxDescriptorsPosted) {
        peerRxPosted = rxDescriptorsPosted;
    }

    int lastMessageNumberSent() {
        return lastMessageNumberSent;
    }

    /** Our oldest RDMA Read still waiting for its response, or null. */
    OutMessage firstOutstandingRead() {
        return outstandingReads.peek();
    }

    /** The oldest outstanding RDMA Read got its whole response (or failed). */
    void removeFirstOutstandingRead() {
        outstandingReads.poll();
    }

    /** RDMA Read Requests of the peer not yet answered in full. */
    int queuedReadResponses() {
        return responses.size() + (currentResponse != null ? 1 : 0);
    }

    /** Queues the response to the peer's RDMA Read Request {@code messageNumber} (§2.2.2.2.6). */
    void queueReadResponse(int messageNumber, ViMemoryRegion region, long address, long length) {
        responses.add(new ReadResponse(messageNumber, region, address, length));
    }

    /** Completes every transmit descriptor with {@code status} and drops the queued Read Responses. */
    void flush(ViStatus status) {
        if (current != null) {
            owner.complete(current.request, status, 0);
            current = null;
        }
        for (ArrayDeque<OutMessage> q : List.of(awaitingAck, outstandingReads, pendingSends)) {
            OutMessage m;
            while ((m = q.poll()) != null) {
                owner.complete(m.request, status, 0);
            }
        }
        responses.clear();
        currentResponse = null;
    }

    // =================================================================== state records

    static final class OutMessage {
        final ViSendRequest request;
        final long length;
        int messageNumber;
        long offset;
        long inOffset;
        boolean transmitError;
        boolean transportError;
        boolean localError;

        OutMessage(ViSendRequest request) {
            this.request = request;
            this.length = request.length();
        }
    }

    private static final class ReadResponse {
        final int messageNumber;
        final ViMemoryRegion region;
        final long address;
        final long length;
        long offset;

        ReadResponse(int messageNumber, ViMemoryRegion region, long address, long length) {
            this.messageNumber = messageNumber;
            this.region = region;
            this.address = address;
            this.length = length;
        }
    }
}
