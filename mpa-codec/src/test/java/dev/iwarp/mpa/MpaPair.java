package dev.iwarp.mpa;

import dev.iwarp.testkit.ApplicationEnd;
import dev.iwarp.testkit.BackToBack;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;
import java.util.function.Consumer;

/**
 * An MPA Initiator and Responder pipeline wired back to back in memory: {@link #pump()} moves each
 * side's outbound octets to the other side's inbound until both are quiet, recording every octet
 * that crossed in each direction.
 */
final class MpaPair {
    final EmbeddedChannel initiator;
    final EmbeddedChannel responder;
    final Recorder initiatorApp;
    final Recorder responderApp;
    final MpaStartupHandler initiatorMpa;
    final MpaStartupHandler responderMpa;
    final ByteArrayOutputStream initiatorToResponder = new ByteArrayOutputStream();
    final ByteArrayOutputStream responderToInitiator = new ByteArrayOutputStream();

    MpaPair(MpaSettings initiatorSettings, MpaSettings responderSettings, Consumer<MpaConnectRequest> decision) {
        initiatorMpa = MpaStartupHandler.initiator(initiatorSettings);
        responderMpa = MpaStartupHandler.responder(responderSettings);
        initiatorApp = new Recorder(null);
        responderApp = new Recorder(decision);
        responder = new EmbeddedChannel(responderMpa, responderApp);
        initiator = new EmbeddedChannel(initiatorMpa, initiatorApp);
    }

    /** Shuttles octets both ways until neither side has anything more to send. */
    void pump() {
        for (int round = 0; round < 1000; round++) {
            initiator.runPendingTasks();
            responder.runPendingTasks();
            boolean moved = BackToBack.move(initiator, responder, initiatorToResponder);
            moved |= BackToBack.move(responder, initiator, responderToInitiator);
            if (!moved) {
                return;
            }
        }
        throw new AssertionError("pair did not settle");
    }

    void finish() {
        initiator.finishAndReleaseAll();
        responder.finishAndReleaseAll();
    }

    /**
     * The application end of a pipeline: records events, ULPDUs (copied, released), exceptions and the completion;
     * hands the Request to {@code decision} (none: left undecided).
     */
    static final class Recorder extends ApplicationEnd<MpaStartupCompletionEvent> {
        final Consumer<MpaConnectRequest> decision;
        MpaConnectRequest connectRequest;

        Recorder(Consumer<MpaConnectRequest> decision) {
            super(MpaStartupCompletionEvent.class);
            this.decision = decision;
        }

        @Override
        protected void otherEvent(Object evt) {
            if (evt instanceof MpaConnectRequest) {
                connectRequest = (MpaConnectRequest) evt;
                if (decision != null) {
                    decision.accept(connectRequest);
                }
            }
        }
    }
}
