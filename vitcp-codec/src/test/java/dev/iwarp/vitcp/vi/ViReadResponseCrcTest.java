package dev.iwarp.vitcp.vi;

import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.VitcpConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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

    /**
     * The source region's memory is gone when its response is copied (another thread deregistered it between the
     * responder's validity check and the copy; here its buffer is released outright): every segment goes out padded
     * with Transmit Error set (§2.2.2.2.5), and the copy each segment had allocated is released (the leak check fails
     * the test otherwise).
     */
    @Test
    void readResponseFromMemoryReleasedUnderItReleasesItsCopies() {
        VitcpConfig cfg = VitcpConfig.builder().reliabilityLevel(ViReliabilityLevel.RELIABLE_DELIVERY).mtu(8192)
                .crcOption(true).build();
        try (ViPair p = new ViPair(cfg, cfg)) {
            int size = 64 * 1024;
            // direct memory: a released heap buffer's capacity reads 0, and the request would be refused (MPE)
            ByteBuf memory = Unpooled.directBuffer(size, size).writeZero(size);
            ViMemoryRegion src = p.pdB.register(memory, ViAccess.RDMA_READ);
            memory.release(); // the test's reference
            ViMemoryRegion dst = p.region(p.pdA, size);
            assertTrue(p.connect().crcEnabled());
            memory.release(); // the region's own: its memory is gone, and the region still reads as registered
            p.a.postSend(ViSendRequest.rdmaRead(1, src.address(), src.handle(), dst.segment(0, size)));
            p.pair.pump();
            assertEquals(new ViCompletion(1, ViOpcode.RDMA_READ, ViStatus.TRANSMIT_ERROR, size, 0, false),
                    p.sendA.poll());
            // deregistering releases the reference already given back
            assertThrows(IllegalReferenceCountException.class, src::deregister);
        }
    }
}
