package dev.iwarp.rdmap;

/**
 * RDMAP message types: the OpCode of the RDMAP control octet (RFC 5040 §4.2 table; 0x8-0xB from
 * RFC 7306). Each names its DDP buffer model, the untagged queue it travels on and the
 * properties the engine dispatches on.
 */
public enum RdmapOpcode {
    RDMA_WRITE(0x0, "RDMA Write", true, -1, false, false, false),
    RDMA_READ_REQUEST(0x1, "RDMA Read Request", false, Queues.READ_REQUEST, false, false, true),
    RDMA_READ_RESPONSE(0x2, "RDMA Read Response", true, -1, false, false, false),
    SEND(0x3, "Send", false, Queues.SEND, false, false, false),
    SEND_WITH_INVALIDATE(0x4, "Send with Invalidate", false, Queues.SEND, false, true, false),
    SEND_WITH_SE(0x5, "Send with SE", false, Queues.SEND, true, false, false),
    SEND_WITH_SE_AND_INVALIDATE(0x6, "Send with SE and Invalidate", false, Queues.SEND, true, true, false),
    TERMINATE(0x7, "Terminate", false, Queues.TERMINATE, false, false, true),
    IMMEDIATE_DATA(0x8, "Immediate Data", false, Queues.SEND, false, false, true),
    IMMEDIATE_DATA_WITH_SE(0x9, "Immediate Data with SE", false, Queues.SEND, true, false, true),
    ATOMIC_REQUEST(0xA, "Atomic Request", false, Queues.READ_REQUEST, false, false, true),
    ATOMIC_RESPONSE(0xB, "Atomic Response", false, Queues.ATOMIC_RESPONSE, false, false, true);

    /** The untagged queues RDMAP uses (RFC 5040 §4.2, §5; RFC 7306). */
    public static final class Queues {
        /** QN 0: Send variants and Immediate Data, into posted receive buffers. */
        public static final int SEND = 0;
        /** QN 1: RDMA Read Requests and Atomic Requests (IRD slots). */
        public static final int READ_REQUEST = 1;
        /** QN 2: the Terminate. */
        public static final int TERMINATE = 2;
        /** QN 3: Atomic Responses (ORD slots). */
        public static final int ATOMIC_RESPONSE = 3;

        private Queues() {
        }
    }

    private static final RdmapOpcode[] BY_VALUE = values();

    private final int value;
    private final String rfcName;
    private final boolean tagged;
    private final int queueNumber;
    private final boolean solicitedEvent;
    private final boolean invalidates;
    private final boolean singleSegment;

    RdmapOpcode(int value, String rfcName, boolean tagged, int queueNumber, boolean solicitedEvent,
                boolean invalidates, boolean singleSegment) {
        this.value = value;
        this.rfcName = rfcName;
        this.tagged = tagged;
        this.queueNumber = queueNumber;
        this.solicitedEvent = solicitedEvent;
        this.invalidates = invalidates;
        this.singleSegment = singleSegment;
    }

    /** The 4-bit OpCode. */
    public int value() {
        return value;
    }

    /** The RFC's name of the message, for logs. */
    public String rfcName() {
        return rfcName;
    }

    /** Whether the message uses DDP's tagged buffer model (else untagged). */
    public boolean tagged() {
        return tagged;
    }

    /** The untagged queue (QN) of the message (RFC 5040 §4.2, §5), or -1 for tagged messages. */
    public int queueNumber() {
        return queueNumber;
    }

    /** Whether the receiver raises a solicited event on delivery (the "with SE" variants). */
    public boolean solicitedEvent() {
        return solicitedEvent;
    }

    /** Whether RsvdULP[8:39] carries an Invalidate STag (RFC 5040 §4.1). */
    public boolean invalidates() {
        return invalidates;
    }

    /**
     * Whether the message is always exactly one DDP segment (L=1): Read Request and Terminate
     * (RFC 5040 §4.4, §4.7) and the RFC 7306 messages, whose payload is a fixed small header.
     */
    public boolean singleSegment() {
        return singleSegment;
    }

    /** The OpCode's message type, or {@code null} for the reserved values 0xC-0xF (and anything else). */
    public static RdmapOpcode fromValue(int value) {
        return value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : null;
    }
}
