package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.DecoderException;

import java.util.Objects;

/**
 * A DDP error detected at the Data Sink (RFC 5041 §7.1): the error, the offending segment's header
 * octets (for the Terminate's Terminated DDP Header) and its length.
 */
public class DdpException extends DecoderException {
    private static final long serialVersionUID = 1L;

    private final DdpError error;
    private final byte[] ddpHeader;
    private final int segmentLength;

    /**
     * @param ddpHeader     the offending segment's DDP header octets (14 or 18), or {@code null}
     * @param segmentLength payload length of the offending segment, or -1 when unknown
     */
    public DdpException(DdpError error, String message, byte[] ddpHeader, int segmentLength) {
        super(message);
        this.error = Objects.requireNonNull(error);
        this.ddpHeader = ddpHeader == null ? null : ddpHeader.clone();
        this.segmentLength = segmentLength;
    }

    /**
     * The exception for {@code error} detected on {@code segment}: carries a copy of the segment's DDP
     * header (as {@link DdpSegment#encodeHeader} writes it, so received Rsvd bits read as 0) and its
     * payload length, which RDMAP puts into the Terminate (RFC 5040 §4.7, as siw). Ownership: the
     * caller keeps its reference to {@code segment}.
     */
    public static DdpException forSegment(DdpError error, DdpSegment segment, String message) {
        byte[] header = new byte[segment.headerLength()];
        ByteBuf out = Unpooled.wrappedBuffer(header).writerIndex(0);
        segment.encodeHeader(out);
        return new DdpException(error, message + ": " + segment, header, segment.payloadLength());
    }

    /** The RFC 5041 §7.2 error this exception reports. */
    public DdpError error() {
        return error;
    }

    /** A copy of the offending DDP header, or {@code null}. */
    public byte[] ddpHeader() {
        return ddpHeader == null ? null : ddpHeader.clone();
    }

    /** Payload length of the offending segment, or -1. */
    public int segmentLength() {
        return segmentLength;
    }

    @Override
    public String getMessage() {
        return "DDP error " + error + " (" + error.description() + "): " + super.getMessage();
    }
}
