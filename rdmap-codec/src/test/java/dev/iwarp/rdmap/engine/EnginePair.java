package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.testkit.BackToBack;
import dev.iwarp.verbs.RdmaDevice;

import java.util.function.UnaryOperator;

/**
 * Two engines back to back in memory, each over a {@link FakeLlpStream}: what one writes down
 * arrives at the other as ULPDUs, as over any framing. {@link #pump()} moves ULPDUs until both sides
 * are quiet; a side that closed is seen closed by the other once its ULPDUs are delivered.
 */
final class EnginePair {
    final EngineSide initiator;
    final EngineSide responder;

    /** Both sides in RTS with the default parameters. */
    EnginePair() {
        this(UnaryOperator.identity(), UnaryOperator.identity());
    }

    /** A pair whose responder is a stream in a PD of its own on {@code responderDevice} (a shared RNIC). */
    EnginePair(RdmaDevice responderDevice) {
        this(responderDevice, UnaryOperator.identity(), UnaryOperator.identity());
    }

    /** Both sides in RTS with the default parameters as changed by the two functions. */
    EnginePair(UnaryOperator<LlpParameters.Builder> initiatorParams,
               UnaryOperator<LlpParameters.Builder> responderParams) {
        this(null, initiatorParams, responderParams);
    }

    /** Default parameters; with {@code inboundBetween} an inbound handler sits above each lower layer (see EngineSide). */
    EnginePair(boolean inboundBetween) {
        this(null, UnaryOperator.identity(), UnaryOperator.identity(), inboundBetween, false);
    }

    /** Default parameters over fake lower layers that copy payloads of up to 1024 octets as they write. */
    static EnginePair copyingBelow() {
        return new EnginePair(null, UnaryOperator.identity(), UnaryOperator.identity(), false, true);
    }

    /** A pair whose responder is in a PD of its own on {@code responderDevice}, with the parameters as changed. */
    EnginePair(RdmaDevice responderDevice, UnaryOperator<LlpParameters.Builder> initiatorParams,
               UnaryOperator<LlpParameters.Builder> responderParams) {
        this(responderDevice, initiatorParams, responderParams, false, false);
    }

    /** As {@link #cuttingSegmentsBelow()}, the responder in a PD of its own on {@code responderDevice}. */
    static EnginePair cuttingSegmentsBelow(RdmaDevice responderDevice, UnaryOperator<LlpParameters.Builder> params) {
        return new EnginePair(responderDevice, params, params, false, true);
    }

    private EnginePair(RdmaDevice responderDevice, UnaryOperator<LlpParameters.Builder> initiatorParams,
                       UnaryOperator<LlpParameters.Builder> responderParams, boolean inboundBetween,
                       boolean copiesBelow) {
        initiator = new EngineSide(LlpRole.INITIATOR, null, inboundBetween);
        responder = new EngineSide(LlpRole.RESPONDER, responderDevice, inboundBetween);
        initiator.llp.copiesUpTo = copiesBelow ? 1024 : -1;
        responder.llp.copiesUpTo = copiesBelow ? 1024 : -1;
        responder.establish(responderParams.apply(responder.parameters()).build());
        initiator.establish(initiatorParams.apply(initiator.parameters()).build());
        pump();
    }

    void pump() {
        BackToBack.pump(initiator.ch, responder.ch, null, null);
    }

    void close() {
        initiator.close();
        responder.close();
    }
}
