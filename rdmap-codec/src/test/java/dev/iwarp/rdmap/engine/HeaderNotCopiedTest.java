package dev.iwarp.rdmap.engine;

import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.Placement;
import dev.iwarp.rdmap.RdmapControl;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.RecvRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The receiver reads each DDP header in place (RFC 5041 §4.2, §4.3) and copies none of it for a Terminate that
 * may quote it (RFC 5040 §7.2): the Terminate's copy is made only when one is built (HeadersInPlaceTest checks the
 * octets it quotes). Counted as bulk reads of the ULPDU's octets while the receiver handles each header.
 */
class HeaderNotCopiedTest {
    private static final int SEGMENT = 1024;
    private static final int SEGMENTS = 100;

    private final RdmaDevice device = new RdmaDevice();
    private final ProtectionDomain pd = device.allocPd();
    private final CompletionQueue sendCq = new CompletionQueue();
    private final CompletionQueue recvCq = new CompletionQueue();
    private final PayloadOnlyLlpStream below = new PayloadOnlyLlpStream(DdpUntaggedSegment.HEADER_LENGTH + SEGMENT);
    private final CountingUlpdu ulpdu = new CountingUlpdu(DdpUntaggedSegment.HEADER_LENGTH + SEGMENT);
    private final ByteBuf payload = Unpooled.buffer(SEGMENT).writeZero(SEGMENT);
    private ByteBuf memory;
    private EmbeddedChannel ch;

    @AfterEach
    void close() {
        if (ch != null) {
            recvCq.setListener(null);
            ch.finishAndReleaseAll();
        }
        device.close();
        if (memory != null) {
            memory.release();
        }
        ulpdu.release();
        payload.release();
    }

    @Test
    void taggedHeadersAreReadInPlaceNotCopied() {
        RdmaEngine engine = start();
        memory = Unpooled.directBuffer(SEGMENTS * SEGMENT, SEGMENTS * SEGMENT);
        MemoryRegion target = pd.register(memory, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        new DdpTaggedSegment(true, 1, RdmapControl.encode(RdmapOpcode.RDMA_WRITE), target.stag(), target.iova(),
                Unpooled.EMPTY_BUFFER).encodeHeader(ulpdu);
        for (int i = 0; i < SEGMENTS; i++) {
            ulpdu.setLong(ulpdu.readerIndex() + 6, target.iova() + (long) i * SEGMENT);
            place(DdpTaggedSegment.HEADER_LENGTH);
        }
        assertEquals(SEGMENTS, engine.queuePair().peerActivity().writes(), "every Write placed");
        // before: each header was copied (14 octets) for a Terminate that was never sent
        assertEquals(0, ulpdu.copies, "bulk reads of the ULPDUs' headers for " + SEGMENTS + " Writes");
    }

    @Test
    void sendHeadersAreReadInPlaceNotCopied() {
        RdmaEngine engine = start();
        memory = Unpooled.directBuffer(SEGMENTS * SEGMENT, SEGMENTS * SEGMENT);
        MemoryRegion ring = pd.register(memory, Access.LOCAL_WRITE);
        for (int i = 0; i < SEGMENTS; i++) {
            engine.queuePair().postRecv(RecvRequest.of(i, ring.slice(i * SEGMENT, SEGMENT)));
        }
        new DdpUntaggedSegment(true, 1, RdmapControl.encode(RdmapOpcode.SEND), 0, 0, 0, 0, Unpooled.EMPTY_BUFFER)
                .encodeHeader(ulpdu);
        for (int i = 0; i < SEGMENTS; i++) {
            ulpdu.setInt(ulpdu.readerIndex() + 10, i + 1); // MSN (RFC 5041 §4.3)
            place(DdpUntaggedSegment.HEADER_LENGTH);
        }
        assertEquals(SEGMENTS, recvCq.poll(SEGMENTS * 2).size(), "every Send placed");
        assertEquals(0, ulpdu.copies, "bulk reads of the ULPDUs' headers for " + SEGMENTS + " Sends");
    }

    /** As a framing that reads payloads directly: the header first, then the payload into the view named. */
    private void place(int headerLength) {
        ulpdu.counting = true;
        Placement p = below.receiver.onHeader(ulpdu, headerLength, SEGMENT);
        ulpdu.counting = false;
        assertEquals(Placement.Kind.PLACE, p.kind());
        ByteBuf view = p.target().view(p.offset(), SEGMENT);
        view.writeBytes(payload, 0, SEGMENT);
        view.release();
        below.receiver.onPlaced();
        ch.pipeline().fireChannelReadComplete();
        ch.runPendingTasks();
    }

    private RdmaEngine start() {
        RdmaEngine engine = new RdmaEngine(pd, sendCq, recvCq);
        ch = new EmbeddedChannel(below, engine);
        LlpParameters p = LlpParameters.builder("fake", LlpRole.RESPONDER, below, "header copies test")
                .ird(4).ord(4).build();
        ch.pipeline().fireUserEventTriggered(LlpStartupEvent.success(p, below));
        ch.runPendingTasks();
        return engine;
    }

    /** A ULPDU that counts bulk reads of its octets (copies) while {@link #counting}; no array to read directly. */
    private static final class CountingUlpdu extends UnpooledHeapByteBuf {
        boolean counting;
        int copies;

        CountingUlpdu(int capacity) {
            super(UnpooledByteBufAllocator.DEFAULT, capacity, capacity);
        }

        @Override
        public boolean hasArray() {
            return false; // a copy then goes through getBytes, as from direct memory without an address
        }

        @Override
        public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
            copies += counting ? 1 : 0;
            return super.getBytes(index, dst, dstIndex, length);
        }

        @Override
        public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
            copies += counting ? 1 : 0;
            return super.getBytes(index, dst, dstIndex, length);
        }

        @Override
        public ByteBuf getBytes(int index, ByteBuffer dst) {
            copies += counting ? 1 : 0;
            return super.getBytes(index, dst);
        }
    }
}
