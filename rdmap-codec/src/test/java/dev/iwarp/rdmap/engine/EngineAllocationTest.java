package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Sge;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.RdmaDevice;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.MemoryBudget;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.ddp.DdpTaggedSegment;
import dev.iwarp.ddp.DdpUntaggedSegment;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.LlpStartupEvent;
import dev.iwarp.ddp.llp.Placement;
import dev.iwarp.ddp.llp.UlpduReceiver;
import dev.iwarp.rdmap.RdmapControl;
import dev.iwarp.rdmap.RdmapOpcode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.function.DoubleSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the engine allocates per message once warm, counted on the one thread that runs it
 * ({@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}): 64 KiB Sends placed straight into posted
 * receives and echoed from them, as serve's bench ring does, and 64 KiB RDMA Writes placed into a region. Each
 * segment is handed over header first and read into the view the engine names, as a framing that reads large
 * payloads straight from the socket does; what the engine writes goes down as its payload buffers alone. Octets
 * allocated are exact for a code path (unlike times): the threshold holds on a loaded machine. The harness itself
 * allocates nothing per message (a run of a path that allocates nothing counts 0).
 */
class EngineAllocationTest {
    private static final int SIZE = 64 * 1024;
    /** Payload octets per segment: four segments per 64 KiB message, each read into a view of its own. */
    private static final int SEGMENT = 16 * 1024;
    private static final int DEPTH = 16;
    private static final int WARMUP = 3_000;
    private static final int MEASURED = 5_000;
    /**
     * Octets per message the engine may allocate at most: a margin for the rare object (a queue growing, a
     * lazily made table) spread over the measured messages, far below one object per message.
     */
    private static final double LIMIT = 4.0;

    private ResourceLeakDetector.Level level;
    private final RdmaDevice device = new RdmaDevice();
    private ProtectionDomain pd = device.allocPd();
    /** Whether the lower layer digests payloads (MPA CRC): each Read Response segment then carries a copy. */
    private boolean crc;
    private final CompletionQueue sendCq = new CompletionQueue();
    private final CompletionQueue recvCq = new CompletionQueue();
    private final PayloadOnlyLlpStream below = new PayloadOnlyLlpStream(DdpUntaggedSegment.HEADER_LENGTH + SEGMENT);
    private EmbeddedChannel ch;
    private UlpduReceiver receiver;
    private ByteBuf memory;
    /** The ULPDU of each segment, its header fields set for each. */
    private ByteBuf ulpdu;

    @BeforeEach
    void quietLeakDetector() {
        // the paranoid leak detector records every access of a tracked buffer (a stack trace each): off while the
        // memory the engine works on is made and used, so that the count is the engine's own
        level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        ulpdu = Unpooled.directBuffer(DdpUntaggedSegment.HEADER_LENGTH + SEGMENT);
    }

    @AfterEach
    void close() {
        if (ch != null) {
            // the receives still posted are flushed in error: queued, not handed to the ring's listeners
            sendCq.setListener(null);
            recvCq.setListener(null);
            ch.finishAndReleaseAll();
        }
        device.close();
        if (memory != null) {
            memory.release();
        }
        ulpdu.release();
        ResourceLeakDetector.setLevel(level);
    }

    /** The engine in RTS over {@link PayloadOnlyLlpStream}, as the responder of a stream with IRD/ORD {@code DEPTH}. */
    private RdmaEngine start() {
        RdmaEngine engine = new RdmaEngine(pd, sendCq, recvCq);
        ch = new EmbeddedChannel(below, engine);
        // a batch writes a whole echo before its flush: no writability round in between
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(4 * SIZE, 8 * SIZE));
        LlpParameters p = LlpParameters.builder("fake", LlpRole.RESPONDER, below, "allocation test")
                .ird(DEPTH).ord(DEPTH).digestsPayload(crc).build();
        ch.pipeline().fireUserEventTriggered(LlpStartupEvent.success(p, below));
        ch.runPendingTasks();
        receiver = below.receiver;
        return engine;
    }

    @Test
    void sendsEchoedFromPooledMemoryAllocateNothing() {
        double perSend = onEventLoopThread(() -> echoedSends(PooledByteBufAllocator.DEFAULT));
        assertTrue(perSend <= LIMIT, perSend + " octets allocated per 64 KiB Send received and echoed");
    }

    @Test
    void sendsEchoedFromUnpooledMemoryAllocateNothing() {
        double perSend = onEventLoopThread(() -> echoedSends(new UnpooledByteBufAllocator(true, true)));
        assertTrue(perSend <= LIMIT, perSend + " octets allocated per 64 KiB Send received and echoed");
    }

    @Test
    void writesIntoPooledMemoryAllocateNothing() {
        double perWrite = onEventLoopThread(() -> writes(PooledByteBufAllocator.DEFAULT, false));
        assertTrue(perWrite <= LIMIT, perWrite + " octets allocated per 64 KiB Write placed");
    }

    @Test
    void writesIntoUnpooledMemoryAllocateNothing() {
        double perWrite = onEventLoopThread(() -> writes(new UnpooledByteBufAllocator(true, true), false));
        assertTrue(perWrite <= LIMIT, perWrite + " octets allocated per 64 KiB Write placed");
    }

    @Test
    void writesIntoOnDemandMemoryAllocateNothing() {
        double perWrite = onEventLoopThread(() -> writes(new UnpooledByteBufAllocator(true, true), true));
        assertTrue(perWrite <= LIMIT, perWrite + " octets allocated per 64 KiB Write placed");
    }

    @Test
    void readsAnsweredFromPooledMemoryAllocateNothing() {
        double perRead = onEventLoopThread(() -> readsAnswered(PooledByteBufAllocator.DEFAULT));
        assertTrue(perRead <= LIMIT, perRead + " octets allocated per 64 KiB Read answered");
    }

    @Test
    void readsAnsweredFromUnpooledMemoryAllocateNothing() {
        double perRead = onEventLoopThread(() -> readsAnswered(new UnpooledByteBufAllocator(true, true)));
        assertTrue(perRead <= LIMIT, perRead + " octets allocated per 64 KiB Read answered");
    }

    /**
     * serve's case: CRC on and a memory budget, so each segment of a response carries its own copy of the source
     * (RFC 5044 §4.4), charged to the peer until its last release: no object per copy once warm, and every charge
     * given back once the copies were written.
     */
    @Test
    void readsAnsweredWithCrcUnderABudgetAllocateNothing() {
        MemoryBudget budget = MemoryBudget.of(1L << 30);
        device.setMemoryBudget(budget);
        pd = device.allocPd();
        crc = true;
        double perRead = onEventLoopThread(() -> readsAnswered(PooledByteBufAllocator.DEFAULT));
        assertTrue(perRead <= LIMIT, perRead + " octets allocated per 64 KiB Read answered with copies");
        assertEquals(0, budget.committed(), "every copy's charge given back: " + budget);
    }

    /**
     * Runs {@code body} on a thread of the kind Netty's event loops run on (a {@link FastThreadLocalThread}, which
     * cleans up its fast thread-locals), as the engine always runs: Netty 4.2's recyclers (the outbound buffer's
     * entries, pooled slices) keep objects for reuse only on such threads and make a new one per use elsewhere,
     * e.g. on the test runner's thread (4 entries of 64 B per echoed Send there). Its result, or what it threw.
     */
    private static double onEventLoopThread(DoubleSupplier body) {
        double[] result = new double[1];
        Throwable[] thrown = new Throwable[1];
        Thread t = new FastThreadLocalThread(() -> {
            try {
                result[0] = body.getAsDouble();
            } catch (Throwable e) {
                thrown[0] = e;
            }
        }, "engine-allocation");
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        if (thrown[0] instanceof RuntimeException) {
            throw (RuntimeException) thrown[0];
        }
        if (thrown[0] instanceof Error) {
            throw (Error) thrown[0];
        }
        if (thrown[0] != null) {
            throw new AssertionError(thrown[0]);
        }
        return result[0];
    }

    /**
     * serve's bench ring: {@code 2 * DEPTH} slots, {@code DEPTH} receives posted; each Send received is echoed from
     * its slot once a receive for a free slot is posted, and its slot is free again once the echo completed.
     * Octets allocated per Send, once warm.
     */
    private double echoedSends(ByteBufAllocator alloc) {
        QueuePair qp = start().queuePair();
        int slots = 2 * DEPTH;
        memory = alloc.directBuffer(slots * SIZE, slots * SIZE);
        MemoryRegion ring = pd.register(memory, Access.LOCAL_WRITE);
        RecvRequest[] recvs = new RecvRequest[slots];
        SendRequest[] echoes = new SendRequest[slots];
        for (int s = 0; s < slots; s++) {
            Sge sge = ring.slice(s * SIZE, SIZE);
            recvs[s] = RecvRequest.of(s, sge);
            echoes[s] = SendRequest.send(s, sge);
        }
        int[] free = new int[slots];
        int[] freeCount = {0};
        for (int s = slots - 1; s >= DEPTH; s--) {
            free[freeCount[0]++] = s;
        }
        long[] echoed = {0};
        recvCq.setReusingListener(c -> {
            assertTrue(c.isSuccess());
            int slot = (int) c.wrId(); // on the event loop: the posts go straight to the engine
            qp.postRecv(recvs[free[--freeCount[0]]]);
            qp.postSend(echoes[slot]);
        });
        sendCq.setReusingListener(c -> {
            assertTrue(c.isSuccess());
            free[freeCount[0]++] = (int) c.wrId();
            echoed[0]++;
        });
        for (int s = 0; s < DEPTH; s++) {
            qp.postRecv(recvs[s]);
        }
        ulpdu.clear();
        new DdpUntaggedSegment(false, 1, RdmapControl.encode(RdmapOpcode.SEND), 0, 0, 0, 0, Unpooled.EMPTY_BUFFER).encodeHeader(ulpdu);
        ulpdu.writeZero(SEGMENT);
        int msn = 1;
        for (int i = 0; i < WARMUP; i++) {
            sendOne(msn++);
        }
        long before = allocatedBytes();
        for (int i = 0; i < MEASURED; i++) {
            sendOne(msn++);
        }
        long octets = allocatedBytes() - before;
        assertEquals(WARMUP + MEASURED, echoed[0], "every Send echoed");
        double perSend = (double) octets / MEASURED;
        System.out.printf("EngineAllocationTest: %s memory, Send received and echoed: %.1f B per message%n",
                alloc.getClass().getSimpleName(), perSend);
        return perSend;
    }

    /** One Send of {@code SIZE} octets, MSN {@code msn}, in segments of {@code SEGMENT}; then the batch ends. */
    private void sendOne(int msn) {
        for (int mo = 0; mo < SIZE; mo += SEGMENT) {
            int at = ulpdu.readerIndex();
            ulpdu.setByte(at, (mo + SEGMENT == SIZE ? 0x40 : 0) | 1); // T=0, L, DV 1 (RFC 5041 §4.3)
            ulpdu.setInt(at + 10, msn);
            ulpdu.setInt(at + 14, mo);
            placeSegment(DdpUntaggedSegment.HEADER_LENGTH);
        }
        endBatch();
    }

    /** 64 KiB RDMA Writes into one region, to the same {@code 2 * DEPTH} slots over and over (bench --op write). */
    private double writes(ByteBufAllocator alloc, boolean onDemand) {
        QueuePair qp = start().queuePair();
        int slots = 2 * DEPTH;
        MemoryRegion target;
        if (onDemand) {
            target = pd.registerOnDemand(slots * SIZE, alloc, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        } else {
            memory = alloc.directBuffer(slots * SIZE, slots * SIZE);
            target = pd.register(memory, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        }
        ulpdu.clear();
        new DdpTaggedSegment(false, 1, RdmapControl.encode(RdmapOpcode.RDMA_WRITE), target.stag(), target.iova(), Unpooled.EMPTY_BUFFER)
                .encodeHeader(ulpdu);
        ulpdu.writeZero(SEGMENT);
        for (int i = 0; i < WARMUP; i++) {
            writeOne(target, i % slots);
        }
        long before = allocatedBytes();
        for (int i = 0; i < MEASURED; i++) {
            writeOne(target, i % slots);
        }
        long octets = allocatedBytes() - before;
        assertEquals(WARMUP + MEASURED, qp.peerActivity().writes(), "every Write placed");
        double perWrite = (double) octets / MEASURED;
        System.out.printf("EngineAllocationTest: %s memory%s, Write placed: %.1f B per message%n",
                alloc.getClass().getSimpleName(), onDemand ? " on demand" : "", perWrite);
        return perWrite;
    }

    private void writeOne(MemoryRegion target, int slot) {
        for (int off = 0; off < SIZE; off += SEGMENT) {
            int at = ulpdu.readerIndex();
            ulpdu.setByte(at, 0x80 | (off + SEGMENT == SIZE ? 0x40 : 0) | 1); // T, L, DV 1 (RFC 5041 §4.2)
            ulpdu.setLong(at + 6, target.iova() + (long) slot * SIZE + off);
            placeSegment(DdpTaggedSegment.HEADER_LENGTH);
        }
        endBatch();
    }

    /**
     * 64 KiB RDMA Read Requests (RFC 5040 §4.4) for the same {@code 2 * DEPTH} slots of one region, each answered
     * with a Read Response from it (bench --op read, responder side). Octets allocated per Read, once warm.
     */
    private double readsAnswered(ByteBufAllocator alloc) {
        QueuePair qp = start().queuePair();
        int slots = 2 * DEPTH;
        memory = alloc.directBuffer(slots * SIZE, slots * SIZE);
        memory.writeZero(slots * SIZE);
        MemoryRegion source = pd.register(memory, Access.LOCAL_WRITE, Access.REMOTE_READ);
        ulpdu.clear();
        new DdpUntaggedSegment(true, 1, RdmapControl.encode(RdmapOpcode.RDMA_READ_REQUEST), 0,
                RdmapOpcode.Queues.READ_REQUEST, 0, 0, Unpooled.EMPTY_BUFFER).encodeHeader(ulpdu);
        // sink STag and TO, RDMA Read Message Size, source STag and TO (RFC 5040 §4.4)
        ulpdu.writeInt(0x1234).writeLong(0).writeInt(SIZE).writeInt(source.stag()).writeLong(0);
        for (int i = 0; i < WARMUP; i++) {
            readOne(source, i + 1, i % slots);
        }
        long before = allocatedBytes();
        for (int i = 0; i < MEASURED; i++) {
            readOne(source, WARMUP + i + 1, i % slots);
        }
        long octets = allocatedBytes() - before;
        assertEquals(WARMUP + MEASURED, qp.peerActivity().readsAnswered(), "every Read answered");
        double perRead = (double) octets / MEASURED;
        System.out.printf("EngineAllocationTest: %s memory, Read answered: %.1f B per message%n",
                alloc.getClass().getSimpleName(), perRead);
        return perRead;
    }

    /** One Read Request, MSN {@code msn}, for slot {@code slot} of {@code source}, delivered whole; then the batch ends. */
    private void readOne(MemoryRegion source, int msn, int slot) {
        int at = ulpdu.readerIndex();
        ulpdu.setInt(at + 10, msn);
        ulpdu.setLong(at + DdpUntaggedSegment.HEADER_LENGTH + 20, source.iova() + (long) slot * SIZE);
        Placement p = receiver.onHeader(ulpdu, DdpUntaggedSegment.HEADER_LENGTH, ulpdu.readableBytes()
                - DdpUntaggedSegment.HEADER_LENGTH);
        assertEquals(Placement.Kind.DELIVER, p.kind());
        receiver.onPayload(ulpdu);
        endBatch();
    }

    /** As a framing that reads large payloads directly: header first, then the payload into the view named. */
    private void placeSegment(int headerLength) {
        Placement p = receiver.onHeader(ulpdu, headerLength, SEGMENT);
        assertEquals(Placement.Kind.PLACE, p.kind());
        ByteBuf view = p.target().view(p.offset(), SEGMENT);
        if (view != null) {
            view.writeBytes(ulpdu, ulpdu.readerIndex() + headerLength, SEGMENT);
            view.release();
        } else {
            p.target().placeAt(p.offset(), ulpdu, ulpdu.readerIndex() + headerLength, SEGMENT);
        }
        receiver.onPlaced();
    }

    /** {@code channelReadComplete}: the batch's writes are flushed; what went down is taken off the channel. */
    private void endBatch() {
        ch.pipeline().fireChannelReadComplete();
        ch.runPendingTasks();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            ((ByteBuf) o).release();
        }
    }

    private static long allocatedBytes() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return mx.getThreadAllocatedBytes(Thread.currentThread().getId());
    }
}
