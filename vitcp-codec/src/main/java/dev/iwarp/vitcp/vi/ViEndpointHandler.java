package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViRdmaHeader;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.ViRemoteErrorCode;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpConnection;
import dev.iwarp.vitcp.VitcpProtocolException;
import dev.iwarp.vitcp.VitcpProtocolException.Violation;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Full-operation handler of a connected VI: data transfer per draft-dicecco-vitcp-01 §2.2.2.2.3 and §3.2-§3.6.
 * Segments messages to the agreed MTU, interleaves RDMA Read Response segments with other messages, reassembles
 * the peer's messages into receive descriptors and registered memory, keeps descriptor flow control, Message ACK
 * and Remote Error Code, and applies the CRC error rules per reliability level. All state is confined to the
 * channel's event loop; {@link ViEndpoint} hands calls from other threads over.
 */
final class ViEndpointHandler extends ChannelDuplexHandler {
    private static final Logger log = LoggerFactory.getLogger(ViEndpointHandler.class);
    /** Segments written between flushes. */
    private static final int FLUSH_EVERY = 16;

    private final ViEndpoint endpoint;
    private final VitcpConnection conn;
    private final ProtectionDomain pd;
    private final int mtu;
    private final boolean reliableReception;
    private ChannelHandlerContext ctx;
    private boolean failed;

    // ---- send side
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

    // ---- responder side (RDMA Read Requests received, §2.2.2.2.6)
    private final ArrayDeque<ReadResponse> responses = new ArrayDeque<>();
    private ReadResponse currentResponse;

    // ---- receive side
    private final ArrayDeque<RecvRequest> postedRecvs = new ArrayDeque<>();
    private int localRxPosted;
    private boolean rxPostedDirty;
    private InMessage inbound;
    private boolean expectedKnown;
    private int expectedMessageNumber;
    private int lastGoodMessage;
    private boolean ackDirty;
    private boolean pumpScheduled;

    ViEndpointHandler(ViEndpoint endpoint, VitcpConnection conn) {
        this.endpoint = endpoint;
        this.conn = conn;
        this.pd = endpoint.protectionDomain();
        this.mtu = conn.mtu();
        this.reliableReception = conn.reliabilityLevel() == ViReliabilityLevel.RELIABLE_RECEPTION;
        this.peerRxPosted = conn.remoteRxDescriptorsPosted();
    }

    ChannelHandlerContext context() {
        return ctx;
    }

    VitcpConnection connection() {
        return conn;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        List<RecvRequest> prePosted = endpoint.attach(this);
        postedRecvs.addAll(prePosted);
        localRxPosted = prePosted.size() & 0xFFFF;
        if (conn.remoteDescriptorFlowControl() && !prePosted.isEmpty()) {
            // receives posted after the CE segment went out are reported by the first NOP
            rxPostedDirty = true;
            schedulePump();
        }
    }

    // =================================================================== API entry points (event loop)

    void postRecv(RecvRequest r) {
        if (failed) {
            endpoint.recvCq().add(new ViCompletion(r.wrId, ViOpcode.RECV, ViStatus.FLUSHED, 0, 0, false));
            return;
        }
        if (!ScatterGather.allValid(r.segments, pd)) {
            endpoint.recvCq().add(new ViCompletion(r.wrId, ViOpcode.RECV, ViStatus.LOCAL_PROTECTION_ERROR, 0, 0,
                    false));
            return;
        }
        postedRecvs.add(r);
        // draft §3.2 "Rx Descriptors Posted": modulo 2^16 over the lifetime of the connection
        localRxPosted = (localRxPosted + 1) & 0xFFFF;
        rxPostedDirty = true;
        schedulePump();
    }

    void postSend(SendRequest r) {
        if (failed) {
            complete(r, ViStatus.FLUSHED, 0);
            return;
        }
        if (!ScatterGather.allValid(r.segments, pd)) {
            complete(r, ViStatus.LOCAL_PROTECTION_ERROR, 0);
            return;
        }
        if (r.length() > 0xFFFFFFFFL) {
            // draft §3.2 "Data Offset": messages of up to 4GB
            complete(r, ViStatus.LOCAL_LENGTH_ERROR, 0);
            return;
        }
        if (r.opcode == ViOpcode.RDMA_READ && conn.reliabilityLevel() == ViReliabilityLevel.UNRELIABLE) {
            // [VIAR]: RDMA Read needs a reliable service
            complete(r, ViStatus.NOT_SUPPORTED, 0);
            return;
        }
        pendingSends.add(new OutMessage(r));
        schedulePump();
    }

    void disconnect() {
        fail("local disconnect", 0, 0, ViStatus.FLUSHED);
    }

    private void schedulePump() {
        if (!pumpScheduled) {
            pumpScheduled = true;
            ctx.executor().execute(this::pump);
        }
    }

    // =================================================================== transmit

    private int rxAvailableAtPeer() {
        // draft §3.2: "Rx Descriptors Posted" minus what our messages consumed, modulo 2^16. While we hold sends we
        // never consume more than was posted, so the difference is 0..65535 (65536 outstanding would read as 0).
        return (peerRxPosted - peerRxConsumed) & 0xFFFF;
    }

    private void pump() {
        pumpScheduled = false;
        if (failed || !ctx.channel().isActive()) {
            return;
        }
        int written = 0;
        boolean any = false;
        while (ctx.channel().isWritable()) {
            // draft §2.2.2.2.3: Read Response segments may be interleaved with segments of other messages
            boolean progress = writeResponseSegment();
            progress |= writeMessageSegment();
            if (!progress) {
                break;
            }
            any = true;
            if (++written % FLUSH_EVERY == 0) {
                ctx.flush();
            }
        }
        boolean needNop = ackDirty || (rxPostedDirty && conn.remoteDescriptorFlowControl());
        if (!any && needNop) {
            // draft §3.2 "Notes on NOP": convey Message ACK / Rx Descriptors Posted when idle
            write(ViSegment.builder(ViSegmentType.NOP).messageNumber(lastMessageNumberSent), Unpooled.EMPTY_BUFFER,
                    null);
            any = true;
        }
        if (any) {
            ctx.flush();
        }
    }

    /** Fills the fields every segment carries (§3.2) and writes it. */
    private void write(ViSegment.Builder b, ByteBuf payload, ChannelFutureListener listener) {
        b.messageAck(reliableReception ? lastGoodMessage : 0).rxDescriptorsPosted(localRxPosted);
        ackDirty = false;
        rxPostedDirty = false;
        if (listener != null) {
            ctx.write(b.build(payload)).addListener(listener);
        } else {
            ctx.write(b.build(payload), ctx.voidPromise());
        }
    }

    private boolean writeMessageSegment() {
        OutMessage m = current;
        if (m == null) {
            m = pendingSends.peek();
            if (m == null) {
                return false;
            }
            SendRequest r = m.request;
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
        SendRequest r = m.request;
        int n = (int) Math.min(mtu, m.length - m.offset);
        boolean eom = m.offset + n == m.length;
        ByteBuf payload = ScatterGather.gather(ctx.alloc(), r.segments, m.offset, n);
        boolean transmitError = false;
        if (payload == null) {
            // §2.2.2.2.5: cannot read the original data: pad and set Transmit Error
            payload = ctx.alloc().buffer(n).writeZero(n);
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
            write(b, payload, f -> complete(done.request, f.isSuccess()
                    ? (done.transmitError ? ViStatus.TRANSMIT_ERROR : ViStatus.SUCCESS) : ViStatus.FLUSHED,
                    done.length));
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
        ByteBuf payload = null;
        if (rr.region.isValid()) {
            try {
                int index = (int) (rr.address - rr.region.address() + rr.offset);
                // with the trailer CRC on, the source may be written meanwhile (by a peer's RDMA Write):
                // the CRC must cover exactly the octets sent (§3.5), so the segment carries a copy
                payload = n == 0 ? Unpooled.EMPTY_BUFFER : conn.crcEnabled()
                        ? ctx.alloc().directBuffer(n, n).writeBytes(rr.region.buffer(), index, n)
                        : rr.region.buffer().retainedSlice(index, n);
            } catch (io.netty.util.IllegalReferenceCountException e) {
                payload = null; // deregistered concurrently
            }
        }
        boolean transmitError = payload == null;
        if (transmitError) {
            payload = ctx.alloc().buffer(n).writeZero(n); // §2.2.2.2.5
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

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            pump();
        }
        ctx.fireChannelWritabilityChanged();
    }

    // =================================================================== receive

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ViSegment s)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            if (!failed) {
                receive(s);
            }
        } catch (VitcpProtocolException e) {
            protocolViolation(e, s.messageNumber());
        } finally {
            ReferenceCountUtil.release(s);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        pump();
        ctx.fireChannelReadComplete();
    }

    private void receive(ViSegment s) {
        ViSegmentType type = s.type();
        if (type.carriesCeHeader() || type.optionalTrailer()) {
            throw new VitcpProtocolException(Violation.UNEXPECTED_SEGMENT, "peer sent " + type + " while Connected");
        }
        int len = s.content().readableBytes();
        if (len > mtu) {
            throw new VitcpProtocolException(Violation.SEGMENT_TOO_LARGE,
                    "peer sent " + len + " payload octets, agreed MTU " + mtu);
        }
        if (s.crcError()) {
            crcError(s);
            return;
        }
        // every segment carries Rx Descriptors Posted and (at Reliable Reception) Message ACK, §3.2
        peerRxPosted = s.rxDescriptorsPosted();
        if (reliableReception) {
            messageAck(s.messageAck(), ViRemoteErrorCode.viErrorType(s.remoteErrorCode()));
            if (failed) {
                return;
            }
        }
        switch (type) {
            case NOP -> { }
            case SEND, RDMA_WRITE -> messageSegment(s, false);
            case RDMA_READ_REQUEST -> readRequest(s);
            case RDMA_READ_RESPONSE -> readResponse(s, false);
            default -> throw new IllegalStateException(type.name());
        }
    }

    private void checkMessageNumber(int messageNumber) {
        // §3.2 "Message Number": messages are numbered sequentially (the first one may be any number)
        if (expectedKnown && messageNumber != expectedMessageNumber) {
            throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer sent message 0x"
                    + Integer.toHexString(messageNumber) + ", expected 0x" + Integer.toHexString(expectedMessageNumber));
        }
        expectedKnown = true;
        expectedMessageNumber = messageNumber + 1;
    }

    /** A Send or RDMA Write segment. {@code transportError}: CRC error on an Unreliable connection (§3.6). */
    private void messageSegment(ViSegment s, boolean transportError) {
        InMessage m = inbound;
        if (m == null) {
            if (s.dataOffset() != 0) {
                throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer started message 0x"
                        + Integer.toHexString(s.messageNumber()) + " at Data Offset " + s.dataOffset());
            }
            checkMessageNumber(s.messageNumber());
            m = new InMessage(s.type(), s.messageNumber());
            inbound = m;
            if (s.type() == ViSegmentType.SEND) {
                m.recv = postedRecvs.poll();
                if (m.recv == null) {
                    m.error = ViRemoteErrorCode.VDE; // no receive descriptor posted
                    m.errorText = "Send arrived with no receive descriptor posted";
                }
            } else {
                checkRdmaTarget(m, s.rdmaHeader(), ViAccess.RDMA_WRITE, conn.localRdmaWriteEnable());
            }
        } else if (s.type() != m.type || s.messageNumber() != m.messageNumber || s.dataOffset() != (int) m.offset) {
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
                } else if (!ScatterGather.scatter(m.recv.segments, m.offset, payload)) {
                    m.error = ViRemoteErrorCode.VDE;
                    m.errorText = "receive descriptor's region was deregistered";
                }
            } else if (m.offset + len > m.rdmaLength) {
                m.error = ViRemoteErrorCode.MPE;
                m.errorText = "RDMA Write beyond its RDMA Length";
            } else if (!ScatterGather.place(m.region, (int) (m.rdmaAddress - m.region.address() + m.offset), payload,
                    payload.readerIndex(), len)) {
                m.error = ViRemoteErrorCode.MPE;
                m.errorText = "region deregistered during RDMA Write";
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
    private static boolean transportErrorDrop(InMessage m, ViSegment s) {
        return s.crcError() && m.type == ViSegmentType.RDMA_WRITE;
    }

    private void checkRdmaTarget(InMessage m, ViRdmaHeader h, ViAccess access, boolean viEnabled) {
        MemoryRegion region = pd.region(h.memoryHandle());
        m.rdmaAddress = h.rdmaAddress();
        m.rdmaLength = h.rdmaLengthUnsigned();
        m.region = region;
        if (!viEnabled) {
            m.error = ViRemoteErrorCode.MPE;
            m.errorText = access + " not enabled on this VI";
        } else if (region == null || !region.allows(access) || !region.contains(h.rdmaAddress(), m.rdmaLength)) {
            // nothing is placed outside a registered region with the right access
            m.error = ViRemoteErrorCode.MPE;
            m.errorText = access + " to 0x" + Long.toHexString(h.rdmaAddress()) + "+" + m.rdmaLength + " handle 0x"
                    + Integer.toHexString(h.memoryHandle()) + " outside any registered region allowing it";
        }
    }

    private void finish(InMessage m) {
        if (m.error != 0) {
            // Unreliable: the message is dropped, its descriptor (if any) completes in error, the VI continues
            log.info("VI/TCP {}: dropping message 0x{}: {}", ctx.channel().remoteAddress(),
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
            m.recv = postedRecvs.poll();
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
        messageReceived(m.messageNumber);
    }

    private void recvCompletion(InMessage m, ViStatus status) {
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

    private void readRequest(ViSegment s) {
        if (inbound != null) {
            // §2.2.2.2.3: only Read Responses may interleave with the segments of another message
            throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "peer sent RDMA Read Request 0x"
                    + Integer.toHexString(s.messageNumber()) + " inside " + inbound.type + " 0x"
                    + Integer.toHexString(inbound.messageNumber));
        }
        checkMessageNumber(s.messageNumber());
        InMessage m = new InMessage(s.type(), s.messageNumber());
        if (conn.reliabilityLevel() == ViReliabilityLevel.UNRELIABLE) {
            throw new VitcpProtocolException(Violation.UNEXPECTED_SEGMENT, "RDMA Read Request on an Unreliable VI");
        }
        int queued = responses.size() + (currentResponse != null ? 1 : 0);
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
        responses.add(new ReadResponse(s.messageNumber(), m.region, m.rdmaAddress, m.rdmaLength));
        messageReceived(s.messageNumber());
    }

    private void readResponse(ViSegment s, boolean transportError) {
        OutMessage m = outstandingReads.peek();
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
        if (!transportError && !ScatterGather.scatter(m.request.segments, m.inOffset, s.content())) {
            m.localError = true; // local region deregistered meanwhile
        }
        m.inOffset += len;
        if (s.endOfMessage()) {
            if (m.inOffset != m.length) {
                throw new VitcpProtocolException(Violation.MESSAGE_SEQUENCE, "Read Response ended after "
                        + m.inOffset + " of " + m.length + " octets");
            }
            outstandingReads.poll();
            // §3.2: RDMA Reads are completed upon receipt of a valid response
            complete(m.request, m.transportError ? ViStatus.TRANSPORT_ERROR : m.transmitError
                    ? ViStatus.TRANSMIT_ERROR : m.localError ? ViStatus.LOCAL_PROTECTION_ERROR : ViStatus.SUCCESS,
                    m.length);
        }
    }

    // =================================================================== Message ACK and errors

    /** Reliable Reception: complete transmit descriptors up to the ACK; handle a Remote Error Code (§3.2). */
    private void messageAck(int ack, int viErrorType) {
        while (!awaitingAck.isEmpty()) {
            OutMessage m = awaitingAck.peek();
            if (m.messageNumber - ack > 0) {
                break;
            }
            awaitingAck.poll();
            if (viErrorType != 0 && m.messageNumber == ack) {
                complete(m.request, errorStatus(viErrorType), 0);
            } else {
                complete(m.request, m.transmitError ? ViStatus.TRANSMIT_ERROR : ViStatus.SUCCESS, m.length);
            }
        }
        if (viErrorType != 0) {
            for (OutMessage r : outstandingReads) {
                if (r.messageNumber == ack) {
                    outstandingReads.remove(r);
                    complete(r.request, errorStatus(viErrorType), 0);
                    break;
                }
            }
            // §3.2: "Message ACK is invalid on subsequent messages": the VI is broken
            log.warn("VI/TCP {}: peer reported {} on message 0x{} (IS error code {})", ctx.channel().remoteAddress(),
                    ViRemoteErrorCode.describe(viErrorType), Integer.toHexString(ack),
                    ViRemoteErrorCode.isErrorCode(viErrorType));
            fail("peer reported " + ViRemoteErrorCode.describe(viErrorType), 0, 0, ViStatus.FLUSHED);
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

    /** Status of our receive descriptor for an error we detected in the peer's message. */
    private static ViStatus localStatus(int viErrorType) {
        return (viErrorType & ViRemoteErrorCode.MPE) != 0 ? ViStatus.LOCAL_PROTECTION_ERROR
                : ViStatus.LOCAL_LENGTH_ERROR;
    }

    /** A protection or descriptor error in a message the peer sent, on a reliable VI. */
    private void remoteError(InMessage m) {
        log.warn("VI/TCP {}: message 0x{} in error ({}): {}", ctx.channel().remoteAddress(),
                Integer.toHexString(m.messageNumber), ViRemoteErrorCode.describe(m.error), m.errorText);
        if (m.recv != null) {
            endpoint.recvCq().add(new ViCompletion(m.recv.wrId, m.type == ViSegmentType.SEND ? ViOpcode.RECV
                    : ViOpcode.RECV_RDMA_WRITE_WITH_IMMEDIATE, localStatus(m.error), m.offset, 0, false));
        }
        fail(m.errorText, m.error, m.messageNumber, ViStatus.FLUSHED);
    }

    /** draft §3.6, action 2: deliver with transport error; close if reliable; RR sends an UTE Message ACK. */
    private void crcError(ViSegment s) {
        boolean unreliable = conn.reliabilityLevel() == ViReliabilityLevel.UNRELIABLE;
        log.warn("VI/TCP {}: CRC error in {} 0x{} ({})", ctx.channel().remoteAddress(), s.type(),
                Integer.toHexString(s.messageNumber()), unreliable ? "continuing, Unreliable" : "closing");
        if (s.type() == ViSegmentType.SEND) {
            if (unreliable) {
                messageSegment(s, true);
                return;
            }
            // deliver what arrived with status transport error
            InMessage m = inbound;
            RecvRequest recv = m != null && m.type == ViSegmentType.SEND ? m.recv
                    : (s.dataOffset() == 0 ? postedRecvs.poll() : null);
            long offset = m != null && m.type == ViSegmentType.SEND ? m.offset : 0;
            if (recv != null) {
                ScatterGather.scatter(recv.segments, offset, s.content().slice(s.content().readerIndex(),
                        (int) Math.max(0, Math.min(s.content().readableBytes(), recv.length - offset))));
                endpoint.recvCq().add(new ViCompletion(recv.wrId, ViOpcode.RECV, ViStatus.TRANSPORT_ERROR,
                        offset + s.content().readableBytes(), s.immediateData(), s.immediateDataValid()));
            }
            inbound = null;
        } else if (unreliable) {
            if (s.type() == ViSegmentType.RDMA_WRITE) {
                messageSegment(s, true); // not placed, the message completes in error
            } else if (s.type() == ViSegmentType.RDMA_READ_RESPONSE) {
                readResponse(s, true);
            }
            return; // a corrupt NOP is ignored
        } else if (s.type() == ViSegmentType.RDMA_READ_RESPONSE) {
            OutMessage r = outstandingReads.peek();
            if (r != null && r.messageNumber == s.messageNumber()) {
                outstandingReads.poll();
                complete(r.request, ViStatus.TRANSPORT_ERROR, r.inOffset);
            }
        }
        fail("CRC error", ViRemoteErrorCode.UTE, s.messageNumber(), ViStatus.FLUSHED);
    }

    private void protocolViolation(VitcpProtocolException e, int messageNumber) {
        log.warn("VI/TCP {}: {}; closing", ctx.channel().remoteAddress(), e.getMessage());
        fail(e.getMessage(), e.viErrorType(), messageNumber, ViStatus.FLUSHED);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof VitcpProtocolException e) {
            protocolViolation(e, lastGoodMessage);
        } else {
            log.debug("VI/TCP {}: {}", ctx.channel().remoteAddress(), cause.toString());
            fail(cause.toString(), 0, 0, ViStatus.FLUSHED);
        }
    }

    /**
     * Ends the connection: at Reliable Reception with an error, first a NOP whose Message ACK names the message in
     * error and whose Remote Error Code says why (§3.2, §3.6); then the TCP connection is closed and every
     * outstanding descriptor is completed.
     */
    private void fail(String why, int viErrorType, int messageInError, ViStatus flushStatus) {
        if (failed) {
            return;
        }
        failed = true;
        if (ctx.channel().isActive()) {
            if (reliableReception && viErrorType != 0) {
                ctx.writeAndFlush(ViSegment.builder(ViSegmentType.NOP).messageNumber(lastMessageNumberSent)
                        .messageAck(messageInError).rxDescriptorsPosted(localRxPosted)
                        .remoteErrorCode(ViRemoteErrorCode.of(viErrorType, 0)).build())
                        .addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            }
        }
        flushAll(flushStatus);
        endpoint.failed(why);
    }

    private void flushAll(ViStatus status) {
        if (current != null) {
            complete(current.request, status, 0);
            current = null;
        }
        for (ArrayDeque<OutMessage> q : List.of(awaitingAck, outstandingReads, pendingSends)) {
            OutMessage m;
            while ((m = q.poll()) != null) {
                complete(m.request, status, 0);
            }
        }
        if (inbound != null && inbound.recv != null) {
            endpoint.recvCq().add(new ViCompletion(inbound.recv.wrId, ViOpcode.RECV, status, 0, 0, false));
        }
        inbound = null;
        RecvRequest r;
        while ((r = postedRecvs.poll()) != null) {
            endpoint.recvCq().add(new ViCompletion(r.wrId, ViOpcode.RECV, status, 0, 0, false));
        }
        responses.clear();
        currentResponse = null;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        // §2.2.2.2.2: when the TCP connection closes the VI connection closes
        fail("TCP connection closed", 0, 0, ViStatus.FLUSHED);
        ctx.fireChannelInactive();
    }

    private void complete(SendRequest r, ViStatus status, long bytes) {
        endpoint.sendCq().add(new ViCompletion(r.wrId, r.opcode, status, bytes, r.immediateData, r.immediateDataValid));
    }

    // =================================================================== state records

    private static final class OutMessage {
        final SendRequest request;
        final long length;
        int messageNumber;
        long offset;
        long inOffset;
        boolean transmitError;
        boolean transportError;
        boolean localError;

        OutMessage(SendRequest request) {
            this.request = request;
            this.length = request.length();
        }
    }

    private static final class InMessage {
        final ViSegmentType type;
        final int messageNumber;
        long offset;
        RecvRequest recv;
        MemoryRegion region;
        long rdmaAddress;
        long rdmaLength;
        int error;
        String errorText;
        boolean transmitError;
        boolean transportError;
        boolean immediateDataValid;
        int immediateData;

        InMessage(ViSegmentType type, int messageNumber) {
            this.type = type;
            this.messageNumber = messageNumber;
        }
    }

    private static final class ReadResponse {
        final int messageNumber;
        final MemoryRegion region;
        final long address;
        final long length;
        long offset;

        ReadResponse(int messageNumber, MemoryRegion region, long address, long length) {
            this.messageNumber = messageNumber;
            this.region = region;
            this.address = address;
            this.length = length;
        }
    }
}
