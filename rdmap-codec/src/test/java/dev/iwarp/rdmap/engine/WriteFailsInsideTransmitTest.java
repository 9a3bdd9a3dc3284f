package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpOutboundMessage;
import dev.iwarp.rdmap.RdmapMessages;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * A segment's write that fails at once with a void promise (MPA's framer on a channel that just closed) reports the
 * failure inside the write: {@code exceptionCaught} reaches the engine, the stream goes to ERROR and the transmitter's
 * queue is discarded while its write loop still holds the message whose segment it is writing. That message is given
 * back to its segmenter by the loop once the write returned, never by the discard: a message made meanwhile (a
 * Terminate's, a response's) must not be the same object, re-initialised under the loop.
 */
class WriteFailsInsideTransmitTest extends EnginePairTest {

    @Test
    void theMessageBeingWrittenIsGivenBackByTheLoopNotByTheDiscard() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        int mulpdu = a.llp.mulpdu;
        MemoryRegion src = a.register(a.buffer(3 * mulpdu, 0x41), Access.LOCAL_WRITE);
        MemoryRegion sink = pair.responder.register(pair.responder.buffer(3 * mulpdu, 0), Access.REMOTE_WRITE);
        RdmapMessages messages = a.engine.stream().messages();
        // the Write's message is this object: made, given back, then taken again by the requester
        DdpOutboundMessage held = messages.rdmaWrite(1, 0, Unpooled.buffer(1).writeByte(1));
        held.discard();
        held.recycle();
        List<DdpOutboundMessage> madeDuringFailure = new ArrayList<>();
        a.llp.failVoidWriteAt = 2; // the Write's second segment (of four): not its last, so its promise is void
        a.llp.afterFailedWrite = () -> madeDuringFailure.add(messages.rdmaWrite(1, 0, Unpooled.buffer(1).writeByte(2)));
        List<Completion> completions = new ArrayList<>();
        a.sendCq.setListener(completions::add);

        a.qp.postSend(SendRequest.rdmaWrite(7, src.all(), sink.stag(), sink.iova()));

        assertEquals(1, madeDuringFailure.size());
        DdpOutboundMessage made = madeDuringFailure.get(0);
        assertNotSame(held, made, "the message being written was handed out again while the write loop held it");
        made.discard();
        made.recycle();
        assertEquals(1, completions.size(), String.valueOf(completions));
        assertEquals(7, completions.get(0).wrId());
        assertFalse(completions.get(0).isSuccess());
        assertEquals(WcStatus.WR_FLUSH_ERR, completions.get(0).status(), String.valueOf(completions));
        // once the loop is done with it, the Write's message is given back (a later message reuses it)
        DdpOutboundMessage later = messages.rdmaWrite(1, 0, Unpooled.buffer(1).writeByte(3));
        DdpOutboundMessage later2 = messages.rdmaWrite(1, 0, Unpooled.buffer(1).writeByte(4));
        try {
            assertSame(held, later == made ? later2 : later, "given back after the loop");
        } finally {
            for (DdpOutboundMessage m : List.of(later, later2)) {
                m.discard();
                m.recycle();
            }
        }
    }
}
