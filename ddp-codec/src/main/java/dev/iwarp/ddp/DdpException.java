package dev.iwarp.ddp;

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
