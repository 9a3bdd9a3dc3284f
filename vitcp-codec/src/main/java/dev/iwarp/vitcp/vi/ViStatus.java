package dev.iwarp.vitcp.vi;

/** Completion status (VIA descriptor status, mapped to verbs-like names). */
public enum ViStatus {
    SUCCESS,
    /** A local data segment is outside a registered region, or the region lacks the access. */
    LOCAL_PROTECTION_ERROR,
    /** The incoming message does not fit the receive descriptor, or no descriptor was posted (VI Descriptor Error). */
    LOCAL_LENGTH_ERROR,
    /** The peer reported RDMA Memory Protection Error in its Message ACK (draft §3.2). */
    REMOTE_PROTECTION_ERROR,
    /** The peer reported VI Descriptor Error in its Message ACK. */
    REMOTE_DESCRIPTOR_ERROR,
    /** CRC error (draft §3.6) or the peer reported Unrecoverable Transport Error. */
    TRANSPORT_ERROR,
    /** The sender marked the message with Transmit Error (draft §3.2). */
    TRANSMIT_ERROR,
    /** The operation is not available at this reliability level or on this connection's attributes. */
    NOT_SUPPORTED,
    /** The connection closed before the descriptor completed. */
    FLUSHED
}
