package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;

/**
 * A Send or RDMA Write of the peer's being received (draft-dicecco-vitcp-01 §2.2.2.2.3: its segments arrive in
 * order, Data Offset by Data Offset, before the next message starts): where its payload goes and what its
 * completion will say. State of {@link ViReceiver}, on the event loop.
 */
final class ViInMessage {
    final ViSegmentType type;
    final int messageNumber;
    /** Payload octets received so far: the Data Offset the next segment must carry. */
    long offset;
    /** The receive descriptor a Send fills (or an RDMA Write with immediate data consumes). */
    ViRecvRequest recv;
    ViMemoryRegion region;
    long rdmaAddress;
    long rdmaLength;
    /** The VI error type found in the message (VDE, MPE), 0 while none. */
    int error;
    String errorText;
    boolean transmitError;
    boolean transportError;
    boolean immediateDataValid;
    int immediateData;

    ViInMessage(ViSegmentType type, int messageNumber) {
        this.type = type;
        this.messageNumber = messageNumber;
    }

    /** Whether {@code s} is this message's next segment: same type and number, at the offset reached (§2.2.2.2.3). */
    boolean continuedBy(ViSegment s) {
        return s.type() == type && s.messageNumber() == messageNumber && s.dataOffset() == (int) offset;
    }
}
