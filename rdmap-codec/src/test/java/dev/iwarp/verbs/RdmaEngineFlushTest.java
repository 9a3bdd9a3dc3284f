package dev.iwarp.verbs;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
