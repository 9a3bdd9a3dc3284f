package dev.iwarp.vitcp;

/** The 5-bit type of a VI segment. draft-dicecco-vitcp-01 §3.2 "Type/Flags". */
public enum ViSegmentType {
    SEND(0),
    RDMA_WRITE(1),
    RDMA_READ_REQUEST(2),
    RDMA_READ_RESPONSE(3),
    NOP(4),
    CONNECT_REQUEST(5),
    CONNECT_ACCEPT(6),
    CONNECT_REJECT(7),
    CONNECT_NO_MATCH(8);

    private static final ViSegmentType[] BY_CODE = values();

    private final int code;

    ViSegmentType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** Returns the type for a wire code, or {@code null} when the draft defines none. */
    public static ViSegmentType valueOf(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** draft-dicecco-vitcp-01 §3.1: payload only in Send, RdmaWrite and RdmaReadResponse. */
    public boolean carriesPayload() {
        return this == SEND || this == RDMA_WRITE || this == RDMA_READ_RESPONSE;
    }

    /**
     * draft-dicecco-vitcp-01 §3.1: the RDMA Header is "included in RdmaRead and RdmaWrite segments only".
     * A Read Response is matched to its request by message number (§3.2), so only the request carries it.
     */
    public boolean carriesRdmaHeader() {
        return this == RDMA_WRITE || this == RDMA_READ_REQUEST;
    }

    /** draft-dicecco-vitcp-01 §3.1: the CE Header is in ConnectRequest and ConnectAccept only. */
    public boolean carriesCeHeader() {
        return this == CONNECT_REQUEST || this == CONNECT_ACCEPT;
    }

    /** draft-dicecco-vitcp-01 §3.2 "Immediate Data": Send and RDMA Write carry immediate data. */
    public boolean supportsImmediateData() {
        return this == SEND || this == RDMA_WRITE;
    }

    /** draft-dicecco-vitcp-01 §3.2 "Data Offset": every other message is a single segment. */
    public boolean multiSegment() {
        return carriesPayload();
    }

    /** draft-dicecco-vitcp-01 §3.5: Reject and NoMatch carry a trailer at the sender's option. */
    public boolean optionalTrailer() {
        return this == CONNECT_REJECT || this == CONNECT_NO_MATCH;
    }

    /** NOP is no message (§3.2 "Notes on NOP"); Read Responses reuse the request's number. */
    public boolean consumesMessageNumber() {
        return this == SEND || this == RDMA_WRITE || this == RDMA_READ_REQUEST;
    }
}
