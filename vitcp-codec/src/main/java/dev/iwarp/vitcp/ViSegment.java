package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import io.netty.buffer.Unpooled;

/**
 * One VI segment: the VI Segment Header, the RDMA or CE Header when its type has one, the payload and
 * the trailer status. draft-dicecco-vitcp-01 §3.1, §3.2.
 *
 * <p>Immutable apart from the reference count of its payload. The payload ({@link #content()}) is owned by
 * this object: whoever holds the segment releases it (a decoded segment's payload is a retained slice of the
 * received stream, no copy).
 */
public final class ViSegment extends DefaultByteBufHolder {

    /** The VI Segment Header is 24 octets. draft-dicecco-vitcp-01 §3.2. */
    public static final int HEADER_LENGTH = 24;
    /** The VI Trailer is a 4-octet CRC. draft-dicecco-vitcp-01 §3.5. */
    public static final int TRAILER_LENGTH = 4;
    public static final int VERSION_1 = 1;
    /** Flags of the Type/Flags octet. draft-dicecco-vitcp-01 §3.2. */
    public static final int FLAG_EOM = 0x80;
    public static final int FLAG_IMMEDIATE_DATA_VALID = 0x40;
    public static final int FLAG_TRANSMIT_ERROR = 0x20;
    public static final int TYPE_MASK = 0x1F;

    private final int version;
    private final ViSegmentType type;
    private final boolean endOfMessage;
    private final boolean immediateDataValid;
    private final boolean transmitError;
    private final int dataOffset;
    private final int immediateData;
    private final int messageNumber;
    private final int messageAck;
    private final int rxDescriptorsPosted;
    private final int remoteErrorCode;
    private final ViRdmaHeader rdmaHeader;
    private final ViCeHeader ceHeader;
    private final boolean trailer;
    private final boolean crcError;
    private final boolean placed;

    private ViSegment(Builder b, ByteBuf payload, boolean trailer, boolean crcError, boolean placed) {
        super(payload);
        this.version = b.version;
        this.type = b.type;
        this.endOfMessage = b.endOfMessage;
        this.immediateDataValid = b.immediateDataValid;
        this.transmitError = b.transmitError;
        this.dataOffset = b.dataOffset;
        this.immediateData = b.immediateData;
        this.messageNumber = b.messageNumber;
        this.messageAck = b.messageAck;
        this.rxDescriptorsPosted = b.rxDescriptorsPosted & 0xFFFF;
        this.remoteErrorCode = b.remoteErrorCode & 0xFFFF;
        this.rdmaHeader = b.rdmaHeader;
        this.ceHeader = b.ceHeader;
        this.trailer = trailer;
        this.crcError = crcError;
        this.placed = placed;
        if (type.carriesRdmaHeader() != (rdmaHeader != null)) {
            throw new IllegalArgumentException(type + (rdmaHeader == null ? " needs" : " takes no") + " RDMA Header");
        }
        if (type.carriesCeHeader() != (ceHeader != null)) {
            throw new IllegalArgumentException(type + (ceHeader == null ? " needs" : " takes no") + " CE Header");
        }
        if (!type.carriesPayload() && payload.isReadable()) {
            throw new IllegalArgumentException(type + " carries no payload");
        }
    }

    /**
     * The connection-management segment (ConnectRequest, ConnectAccept, ConnectReject, ConnectNoMatch) the readable
     * octets begin with, judged by its fixed header (§3.2: Version 1, the Type, a Segment Length that fits the type),
     * or {@code null}: for telling a VI/TCP peer, whose first segment is always one of these (§4.2), from another
     * framing's peer by its first octets. Reads nothing; needs 4 readable octets.
     */
    public static ViSegmentType connectionSegmentAt(ByteBuf in) {
        if (in.readableBytes() < 4 || in.getUnsignedByte(in.readerIndex()) != VERSION_1) {
            return null;
        }
        ViSegmentType type = ViSegmentType.valueOf(in.getUnsignedByte(in.readerIndex() + 1) & TYPE_MASK);
        if (type == null || !(type.carriesCeHeader() || type.optionalTrailer())) {
            return null;
        }
        int length = in.getUnsignedShort(in.readerIndex() + 2);
        boolean fits = type.carriesCeHeader() ? length >= HEADER_LENGTH + ViCeHeader.FIXED_LENGTH
                : length == HEADER_LENGTH || length == HEADER_LENGTH + TRAILER_LENGTH;
        return fits ? type : null;
    }

    public static Builder builder(ViSegmentType type) {
        return new Builder(type);
    }

    public int version() {
        return version;
    }

    public ViSegmentType type() {
        return type;
    }

    public boolean endOfMessage() {
        return endOfMessage;
    }

    public boolean immediateDataValid() {
        return immediateDataValid;
    }

    public boolean transmitError() {
        return transmitError;
    }

    /** Unsigned 32-bit count of payload octets in prior segments of this message. §3.2 "Data Offset". */
    public int dataOffset() {
        return dataOffset;
    }

    public int immediateData() {
        return immediateData;
    }

    public int messageNumber() {
        return messageNumber;
    }

    public int messageAck() {
        return messageAck;
    }

    public int rxDescriptorsPosted() {
        return rxDescriptorsPosted;
    }

    public int remoteErrorCode() {
        return remoteErrorCode;
    }

    public ViRdmaHeader rdmaHeader() {
        return rdmaHeader;
    }

    public ViCeHeader ceHeader() {
        return ceHeader;
    }

    /**
     * Whether a trailer CRC follows (decoded), or is asked for on a ConnectReject/ConnectNoMatch (encode; other
     * types get a trailer according to the connection's CRC state, §3.5).
     */
    public boolean trailer() {
        return trailer;
    }

    /** Set by the decoder when the trailer CRC did not match. draft-dicecco-vitcp-01 §3.6. */
    public boolean crcError() {
        return crcError;
    }

    /**
     * Set by the decoder when the payload was read straight into the destination the VI's receive half named for it
     * ({@link ViPayloadPlacement}): {@link #content()} is a view of that memory, already in place.
     */
    public boolean placed() {
        return placed;
    }

    public int typeFlagsOctet() {
        return type.code() | (endOfMessage ? FLAG_EOM : 0) | (immediateDataValid ? FLAG_IMMEDIATE_DATA_VALID : 0)
                | (transmitError ? FLAG_TRANSMIT_ERROR : 0);
    }

    /** Length of headers (segment, RDMA, CE) without payload and trailer. */
    public int headersLength() {
        return HEADER_LENGTH + (rdmaHeader != null ? ViRdmaHeader.LENGTH : 0)
                + (ceHeader != null ? ceHeader.encodedLength() : 0);
    }

    /**
     * The Segment Length field: headers plus payload, not the trailer (draft-dicecco-vitcp-01 §3.2, "the total
     * length exceeds the value contained in the Segment Length by the length of the trailer"). Exception,
     * decided by this implementation: a ConnectReject/ConnectNoMatch with a trailer counts it (28), because
     * §3.6 says the receiver detects that trailer "by means of the segment length".
     */
    public int segmentLength() {
        int n = headersLength() + content().readableBytes();
        return type.optionalTrailer() && trailer ? n + TRAILER_LENGTH : n;
    }

    /** A copy of this segment with the decoder's trailer/CRC verdict (used by the decoder only). */
    static ViSegment decoded(Builder b, ByteBuf payload, boolean trailer, boolean crcError) {
        return new ViSegment(b, payload, trailer, crcError, false);
    }

    /** A segment whose payload the decoder read into its destination ({@code payload}, a view of it). */
    static ViSegment decodedPlaced(Builder b, ByteBuf payload, boolean trailer, boolean crcError) {
        return new ViSegment(b, payload, trailer, crcError, true);
    }

    /** For tests: a segment as the decoder would produce it. */
    static ViSegment decodedForTest(Builder b, ByteBuf payload, boolean trailer, boolean crcError) {
        return new ViSegment(b, payload, trailer, crcError, false);
    }

    public Builder toBuilder() {
        return new Builder(type).version(version).endOfMessage(endOfMessage).immediateDataValid(immediateDataValid)
                .transmitError(transmitError).dataOffset(dataOffset).immediateData(immediateData)
                .messageNumber(messageNumber).messageAck(messageAck).rxDescriptorsPosted(rxDescriptorsPosted)
                .remoteErrorCode(remoteErrorCode).rdmaHeader(rdmaHeader).ceHeader(ceHeader).trailer(trailer);
    }

    @Override
    public ViSegment replace(ByteBuf content) {
        return new ViSegment(toBuilder(), content, trailer, crcError, placed);
    }

    @Override
    public ViSegment copy() {
        return replace(content().copy());
    }

    @Override
    public ViSegment duplicate() {
        return replace(content().duplicate());
    }

    @Override
    public ViSegment retainedDuplicate() {
        return replace(content().retainedDuplicate());
    }

    @Override
    public ViSegment retain() {
        super.retain();
        return this;
    }

    @Override
    public ViSegment retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public ViSegment touch() {
        super.touch();
        return this;
    }

    @Override
    public ViSegment touch(Object hint) {
        super.touch(hint);
        return this;
    }

    /**
     * Field-wise equality including payload bytes (for tests and diagnostics); not {@link #placed()}, which says
     * where the octets were read to.
     */
    public boolean sameAs(ViSegment o) {
        return version == o.version && type == o.type && endOfMessage == o.endOfMessage
                && immediateDataValid == o.immediateDataValid && transmitError == o.transmitError
                && dataOffset == o.dataOffset && immediateData == o.immediateData
                && messageNumber == o.messageNumber && messageAck == o.messageAck
                && rxDescriptorsPosted == o.rxDescriptorsPosted && remoteErrorCode == o.remoteErrorCode
                && java.util.Objects.equals(rdmaHeader, o.rdmaHeader) && java.util.Objects.equals(ceHeader, o.ceHeader)
                && trailer == o.trailer && crcError == o.crcError && content().equals(o.content());
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("ViSegment(").append(type)
                .append(endOfMessage ? ", EOM" : "").append(immediateDataValid ? ", IDV" : "")
                .append(transmitError ? ", TrE" : "")
                .append(", msg=0x").append(Integer.toHexString(messageNumber))
                .append(", offset=").append(Integer.toUnsignedString(dataOffset))
                .append(", imm=0x").append(Integer.toHexString(immediateData))
                .append(", ack=0x").append(Integer.toHexString(messageAck))
                .append(", rxPosted=").append(rxDescriptorsPosted)
                .append(", remoteError=0x").append(Integer.toHexString(remoteErrorCode));
        if (rdmaHeader != null) {
            sb.append(", ").append(rdmaHeader);
        }
        if (ceHeader != null) {
            sb.append(", ").append(ceHeader);
        }
        sb.append(", payload=").append(content().readableBytes()).append(placed ? " placed" : "");
        if (trailer) {
            sb.append(crcError ? ", CRC BAD" : ", CRC");
        }
        return sb.append(')').toString();
    }

    /** Builder; {@link #build(ByteBuf)} takes ownership of the payload. */
    public static final class Builder {
        private final ViSegmentType type;
        private int version = VERSION_1;
        private boolean endOfMessage;
        private boolean immediateDataValid;
        private boolean transmitError;
        private int dataOffset;
        private int immediateData;
        private int messageNumber;
        private int messageAck;
        private int rxDescriptorsPosted;
        private int remoteErrorCode;
        private ViRdmaHeader rdmaHeader;
        private ViCeHeader ceHeader;
        private boolean trailer;

        private Builder(ViSegmentType type) {
            this.type = type;
        }

        public Builder version(int v) {
            version = v;
            return this;
        }

        public Builder endOfMessage(boolean v) {
            endOfMessage = v;
            return this;
        }

        public Builder immediateDataValid(boolean v) {
            immediateDataValid = v;
            return this;
        }

        public Builder transmitError(boolean v) {
            transmitError = v;
            return this;
        }

        public Builder dataOffset(int v) {
            dataOffset = v;
            return this;
        }

        public Builder immediateData(int v) {
            immediateData = v;
            return this;
        }

        public Builder messageNumber(int v) {
            messageNumber = v;
            return this;
        }

        public Builder messageAck(int v) {
            messageAck = v;
            return this;
        }

        public Builder rxDescriptorsPosted(int v) {
            rxDescriptorsPosted = v;
            return this;
        }

        public Builder remoteErrorCode(int v) {
            remoteErrorCode = v;
            return this;
        }

        public Builder rdmaHeader(ViRdmaHeader v) {
            rdmaHeader = v;
            return this;
        }

        public Builder ceHeader(ViCeHeader v) {
            ceHeader = v;
            return this;
        }

        /** Only meaningful for ConnectReject/ConnectNoMatch (§3.5 "at the option of the sender"). */
        public Builder trailer(boolean v) {
            trailer = v;
            return this;
        }

        public ViSegment build() {
            return build(Unpooled.EMPTY_BUFFER);
        }

        /** @param payload ownership passes to the returned segment */
        public ViSegment build(ByteBuf payload) {
            return new ViSegment(this, payload, trailer, false, false);
        }
    }
}
