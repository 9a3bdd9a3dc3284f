package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.VitcpConfig;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With the trailer CRC on (§3.5), an RDMA Read Response's CRC covers exactly the octets sent even when
 * the source region is written (as by a peer's RDMA Write) after the CRC was computed and before the
 * octets left: each response segment carries a copy.
 */
class ViReadResponseCrcTest {

    @Test
    void readResponseFromMemoryWrittenWhileInFlight() {
        VitcpConfig cfg = VitcpConfig.builder().reliabilityLevel(ViReliabilityLevel.RELIABLE_DELIVERY).mtu(8192)
                .crcOption(true).build();
        try (ViPair p = new ViPair(cfg, cfg)) {
            int size = 256 * 1024;
            ViMemoryRegion src = p.region(p.pdB, size, ViAccess.RDMA_READ, ViAccess.RDMA_WRITE);
            ViMemoryRegion dst = p.region(p.pdA, size);
            ViPair.fill(src, ViPair.pattern(size, 7));
            assertTrue(p.connect().crcEnabled());
            int[] written = {0};
            // every buffer B sends is already framed and CRC'd: change the source before it leaves
            p.pair.bToAFilter((ByteBuf b) -> {
                src.buffer().setByte(written[0]++ % size, written[0]);
                return b;
            });
            p.a.postSend(ViSendRequest.rdmaRead(1, src.address(), src.handle(), dst.segment(0, size)));
            p.pair.pump();
            assertTrue(written[0] > 0, "the source changed while the response was in flight");
            ViCompletion c = p.sendA.poll();
            assertEquals(new ViCompletion(1, ViOpcode.RDMA_READ, ViStatus.SUCCESS, size, 0, false), c,
                    "no CRC error at the requester");
        }
    }
}
