package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpConfig;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A descriptor that completes FLUSHED because the VI ended finds why already recorded in {@link ViEndpoint#failure()}
 * when its completion is delivered, so a consumer (bench, a session's log line) can name the cause beside it: the
 * peer's close, a TCP error on a write, a protocol violation by the peer.
 */
class ViFailureCauseTest {
    private static VitcpConfig config(ViReliabilityLevel level) {
        return VitcpConfig.builder().reliabilityLevel(level).mtu(8192).build();
    }

    /** Each completion of {@code cq} as "status: the endpoint's failure() when it was delivered". */
    private static List<String> seen(ViCompletionQueue cq, ViEndpoint e) {
        List<String> seen = new ArrayList<>();
        cq.setListener(c -> seen.add(c.status() + ": " + e.failure()));
        return seen;
    }

    /** Connects the pair; the returned request writes 4096 octets from A into B's region. */
    private static ViSendRequest connectForWrite(ViPair p) {
        ViMemoryRegion src = p.region(p.pdA, 4096);
        ViMemoryRegion dst = p.region(p.pdB, 4096, ViAccess.RDMA_WRITE);
        p.connect();
        return ViSendRequest.rdmaWrite(1, dst.address(), dst.handle(), src.segment(0, 4096));
    }

    @Test
    void aWriteFlushedByThePeersCloseFindsItNamed() {
        ViReliabilityLevel rr = ViReliabilityLevel.RELIABLE_RECEPTION;
        try (ViPair p = new ViPair(config(rr), config(rr))) {
            List<String> seen = seen(p.sendA, p.a);
            p.a.postSend(connectForWrite(p));
            p.pair.a().runPendingTasks(); // on the wire; at Reliable Reception it completes on B's Message ACK (§3.2)
            p.pair.b().close(); // before that ACK: A reads the FIN
            p.pair.pump();
            assertEquals(List.of("FLUSHED: TCP connection closed"), seen);
        }
    }

    @Test
    void aWriteTcpCouldNotTakeFindsTheTcpError() {
        ViReliabilityLevel rd = ViReliabilityLevel.RELIABLE_DELIVERY;
        try (ViPair p = new ViPair(config(rd), config(rd))) {
            List<String> seen = seen(p.sendA, p.a);
            ViSendRequest write = connectForWrite(p);
            p.pair.a().pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                    ReferenceCountUtil.release(msg);
                    promise.setFailure(new IOException("Connection reset by peer")); // as NIO's write reports a RST
                }
            });
            p.a.postSend(write);
            p.pair.a().runPendingTasks();
            assertEquals(List.of("FLUSHED: TCP error: Connection reset by peer"), seen);
        }
    }

    @Test
    void aWriteFlushedByAPeersViolationFindsTheViolation() {
        ViReliabilityLevel rr = ViReliabilityLevel.RELIABLE_RECEPTION;
        try (ViPair p = new ViPair(config(rr), config(rr))) {
            List<String> seen = seen(p.sendA, p.a);
            p.a.postSend(connectForWrite(p));
            p.pair.a().runPendingTasks();
            // §3.2 "Data Offset": a message starts at offset 0
            p.pair.a().writeInbound(ViSegment.builder(ViSegmentType.SEND).messageNumber(1).dataOffset(8)
                    .build(Unpooled.buffer(0)));
            assertEquals(List.of("FLUSHED: MESSAGE_SEQUENCE: peer started message 0x1 at Data Offset 8"), seen);
        }
    }
}
