package dev.iwarp.vitcp.vi;

/**
 * A completed descriptor.
 *
 * @param wrId               the consumer's work request id
 * @param opcode             what completed
 * @param status             how
 * @param byteLength         octets transferred (received octets for receives)
 * @param immediateData      the Immediate Data field (draft §3.2), meaningful when {@code immediateDataValid}
 * @param immediateDataValid the sender set Immediate Data Valid
 */
public record ViCompletion(long wrId, ViOpcode opcode, ViStatus status, long byteLength, int immediateData,
                           boolean immediateDataValid) {
    /** Whether the descriptor completed successfully. */
    public boolean ok() {
        return status == ViStatus.SUCCESS;
    }
}
