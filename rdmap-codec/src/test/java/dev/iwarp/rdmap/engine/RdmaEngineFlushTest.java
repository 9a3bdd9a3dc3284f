package dev.iwarp.rdmap.engine;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import dev.iwarp.testkit.BackToBack;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Flush consolidation: requests posted inside a read batch go out with one flush at its end. */
class RdmaEngineFlushTest {
    private EnginePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private static final class FlushCounter extends ChannelOutboundHandlerAdapter {
        int flushes;

        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes++;
            ctx.flush();
        }
    }

    @Test
    void sendsPostedFromAReceiveCompletionAreFlushedOnceAtReadComplete() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion aSrc = a.register(a.buffer(64, 0x41), Access.LOCAL_WRITE);
        MemoryRegion aRecv = a.register(a.buffer(3 * 16, 0), Access.LOCAL_WRITE);
        MemoryRegion bSrc = b.register(b.buffer(64, 0x42), Access.LOCAL_WRITE);
        MemoryRegion bRecv = b.register(b.buffer(64, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 3; i++) {
            a.qp.postRecv(RecvRequest.of(i, aRecv.slice(i * 16, 16)));
        }
        b.qp.postRecv(RecvRequest.of(9, bRecv.all()));
        // the responder answers one Send with three, from its completion listener (inside channelRead)
        b.recvCq.setListener(c -> {
            for (int i = 0; i < 3; i++) {
                b.qp.postSend(SendRequest.send(100 + i, bSrc.slice(i * 16, 16)));
            }
        });
        FlushCounter counter = new FlushCounter();
        b.ch.pipeline().addFirst(counter);
        a.qp.postSend(SendRequest.send(1, aSrc.slice(0, 10)));
        pair.pump();
        assertEquals(1, counter.flushes, "one flush for the read batch, none per postSend");
        List<Completion> got = new ArrayList<>();
        for (Completion c; (c = a.recvCq.poll()) != null; ) {
            got.add(c);
        }
        assertEquals(3, got.size(), "all three Sends arrived");
        for (int i = 0; i < 3; i++) {
            assertEquals(i, got.get(i).wrId());
            assertEquals(16, got.get(i).byteLength());
            assertEquals(0x42, aRecv.memory().getByte(i * 16));
        }
        assertEquals(3, b.sendCq.size(), "the three Sends completed");
    }

    @Test
    void aSendPostedOutsideAReadBatchIsFlushedAtOnce() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        MemoryRegion aSrc = a.register(a.buffer(16, 0x41), Access.LOCAL_WRITE);
        MemoryRegion bRecv = pair.responder.register(pair.responder.buffer(16, 0), Access.LOCAL_WRITE);
        pair.responder.qp.postRecv(RecvRequest.of(1, bRecv.all()));
        FlushCounter counter = new FlushCounter();
        a.ch.pipeline().addFirst(counter);
        a.qp.postSend(SendRequest.send(1, aSrc.all()));
        assertEquals(1, counter.flushes);
        pair.pump();
        assertEquals(1, pair.responder.recvCq.size());
    }
    /**
     * Reads reposted while a batch of Read Responses is read go out once no more than ORD / 2 Reads remain on
     * the wire, not only at the batch's end: a batch can hold every response, and the responder would sit idle
     * meanwhile. ORD is 4 here: the requests posted after the 2nd and the 4th response are flushed
     * then.
     */
    @Test
    void readsPostedInsideABatchOfResponsesLeaveBeforeTheResponderRunsDry() {
        pair = new EnginePair();
        EngineSide a = pair.initiator;
        EngineSide b = pair.responder;
        MemoryRegion sink = a.register(a.buffer(64, 0), Access.LOCAL_WRITE);
        MemoryRegion source = b.register(b.buffer(64, 0x42), Access.REMOTE_READ);
        SendRequest read = SendRequest.rdmaRead(1, sink.all(), source.stag(), source.iova());
        List<Completion> completed = new ArrayList<>();
        a.sendCq.setListener(c -> {
            completed.add(c);
            if (completed.size() <= 4) {
                a.qp.postSend(read);
            }
        });
        for (int i = 0; i < 4; i++) {
            a.qp.postSend(read); // ORD 4: all four on the wire
        }
        BackToBack.move(a.ch, b.ch, null);
        List<ByteBuf> responses = new ArrayList<>();
        for (ByteBuf r; (r = b.ch.readOutbound()) != null; ) {
            responses.add(r);
        }
        assertEquals(4, responses.size(), "four Read Responses");
        FlushCounter counter = new FlushCounter();
        a.ch.pipeline().addFirst(counter);
        int[] flushesAfter = new int[4];
        for (int i = 0; i < 4; i++) { // one read batch: no channelReadComplete until all four were read
            a.ch.pipeline().fireChannelRead(responses.get(i));
            flushesAfter[i] = counter.flushes;
        }
        assertArrayEquals(new int[] {0, 1, 1, 2}, flushesAfter, "flushed when 2 of ORD 4 were left on the wire");
        int requests = 0;
        for (Object o; (o = a.ch.readOutbound()) != null; ) {
            requests++;
            ReferenceCountUtil.release(o);
        }
        assertEquals(4, requests, "the four reposted Read Requests left inside the batch");
        a.ch.pipeline().fireChannelReadComplete();
        assertEquals(3, counter.flushes, "channelReadComplete flushes as before");
        assertEquals(4, completed.size());
        assertTrue(completed.stream().allMatch(Completion::isSuccess), String.valueOf(completed));
        assertEquals(0x42, sink.memory().getByte(63));
    }
}
