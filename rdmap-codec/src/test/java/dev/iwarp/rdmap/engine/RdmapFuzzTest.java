package dev.iwarp.rdmap.engine;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.iwarp.ddp.DdpException;
import dev.iwarp.ddp.llp.LlpException;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ddp.llp.LlpRole;
import dev.iwarp.ddp.llp.RtrMessage;
import dev.iwarp.rdmap.RdmapException;
import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.FuzzInput;
import dev.iwarp.testkit.fuzz.FuzzLogs;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

/**
 * Fuzz target for the RDMAP receive path (Jazzer) over the framing-neutral fixture: one
 * {@link EngineSide} ([FakeLlpStream, DdpCodec, tap, RdmaEngine]) in RTS receives the fuzzer's
 * ULPDUs as a framing would deliver them. Memory: regions of known bounds with canaries around them
 * (canaries: {@link Regions#CANARY}), some remotely writable, one only remotely readable, one local only;
 * receive buffers posted on the Send queue; an RDMA Read and a FetchAdd outstanding so Read and Atomic
 * Responses have somewhere to go. Each input must end in no exception other than the RDMAP, DDP and
 * LLP errors (thrown, fired or logged), no buffer left referenced, no canary overwritten, and nothing
 * placed in a region the peer may not write.
 */
@ExtendWith(FuzzLogs.class)
class RdmapFuzzTest {
    static final List<Class<? extends Throwable>> TYPED =
            List.of(RdmapException.class, DdpException.class, LlpException.class);
    static final RtrMessage[] RTR = {null, RtrMessage.SEND, RtrMessage.WRITE, RtrMessage.READ};

    private static final int GUARD = 32;
    private final java.util.Map<ByteBuf, ByteBuf> wholes = new java.util.IdentityHashMap<>();

    /**
     * Octet 0: bit 0 Initiator (else Responder), bits 1-2 RTR type (none, Send, Write, Read), bit 3
     * post the RDMA Read and FetchAdd, bits 4-5 IRD/ORD - 1. Octet 1: receive buffer size (x 4). Then
     * records [length octet, patch octet, ULPDU]. Patch bit 0 points the ULPDU's remote STag and TO at
     * region (bits 1-3): a tagged ULPDU's header STag and TO, a Read Request's Data Source, an Atomic
     * Request's Remote STag/TO, a Send with Invalidate's Invalidate STag; the TO is that region's base
     * plus the original low 16 TO bits minus 256, so the fuzzer reaches the bounds checks without
     * guessing random STags and TOs.
     */
    @FuzzTest
    void receive(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int cfg = in.u8();
        int recvSize = Math.max(1, in.u8() * 4);
        boolean initiator = (cfg & 1) != 0;
        int irdOrd = 1 + ((cfg >>> 4) & 3);

        TrackingAllocator alloc = new TrackingAllocator();
        wholes.clear();
        EngineSide side = new EngineSide(initiator ? LlpRole.INITIATOR : LlpRole.RESPONDER);
        side.ch.config().setAllocator(alloc);
        List<ByteBuf> mayChange = new ArrayList<>();
        List<ByteBuf> mustNotChange = new ArrayList<>();
        List<MemoryRegion> targets = new ArrayList<>();
        try {
            ByteBuf writable = guarded(alloc, 256);
            ByteBuf all = guarded(alloc, 64);
            ByteBuf readOnly = guarded(alloc, 128);
            ByteBuf localOnly = guarded(alloc, 32);
            ByteBuf sink = guarded(alloc, 64);
            ByteBuf result = guarded(alloc, 8);
            mayChange.addAll(List.of(writable, all, sink, result));
            mustNotChange.addAll(List.of(readOnly, localOnly));
            targets.add(side.register(writable, Access.REMOTE_WRITE, Access.LOCAL_WRITE));
            targets.add(side.register(all, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC,
                    Access.LOCAL_WRITE));
            targets.add(side.register(readOnly, Access.REMOTE_READ));
            targets.add(side.register(localOnly, Access.LOCAL_WRITE));
            MemoryRegion sinkMr = side.register(sink, Access.LOCAL_WRITE);
            MemoryRegion resultMr = side.register(result, Access.LOCAL_WRITE);
            targets.add(sinkMr);
            targets.add(resultMr);
            for (int i = 0; i < 3; i++) {
                ByteBuf recv = guarded(alloc, recvSize);
                mayChange.add(recv);
                MemoryRegion mr = side.register(recv, Access.LOCAL_WRITE);
                targets.add(mr);
                side.qp.postRecv(RecvRequest.of(i, mr.all()));
            }
            ByteBuf small = guarded(alloc, 16);
            targets.add(side.register(small, Access.REMOTE_READ, Access.REMOTE_WRITE));
            mayChange.add(small);

            LlpParameters.Builder p = side.parameters().ird(irdOrd).ord(irdOrd);
            RtrMessage rtr = RTR[(cfg >>> 1) & 3];
            if (rtr != null) {
                p.rtr(rtr);
            }
            side.establish(p.build());
            if ((cfg & 8) != 0) {
                side.qp.postSend(SendRequest.rdmaRead(100, sinkMr.all(), 0x1234_5600, 0));
                side.qp.postSend(SendRequest.fetchAdd(101, resultMr.all(), 0x1234_5700, 0, 1, 0));
            }
            drain(side);

            while (in.hasMore() && side.ch.isOpen()) {
                int length = in.u8();
                int patch = in.u8();
                byte[] ulpdu = in.bytes(length);
                if ((patch & 1) != 0) {
                    patch(ulpdu, targets.get(((patch >>> 1) & 7) % targets.size()));
                }
                side.ch.writeInbound(alloc.track(alloc.heapBuffer(ulpdu.length).writeBytes(ulpdu)));
                drain(side);
            }
            side.ch.close();
            drain(side);
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, TYPED);
        } finally {
            try {
                for (ByteBuf b : mayChange) {
                    assertCanaries(b);
                }
                for (ByteBuf b : mustNotChange) {
                    assertUntouched(b);
                }
            } finally {
                try {
                    side.close();
                } catch (Throwable t) {
                    FuzzChecks.assertTyped(t, TYPED);
                } finally {
                    wholes.values().forEach(ByteBuf::release);
                }
            }
        }
        FuzzChecks.assertNoUntypedLogged(TYPED);
        alloc.assertAllReleased();
    }

    /**
     * A region of {@code size} octets with {@link Regions#CANARY} octets on each side, from the tracking
     * allocator (unpooled heap: the paranoid leak detector's per-access records on pooled buffers
     * would cost most of the fuzzer's time, and the tracking allocator checks these buffers anyway).
     */
    private ByteBuf guarded(TrackingAllocator alloc, int size) {
        ByteBuf whole = alloc.heapBuffer(size + 2 * GUARD, size + 2 * GUARD);
        byte[] fill = new byte[size + 2 * GUARD];
        java.util.Arrays.fill(fill, (byte) Regions.CANARY);
        whole.writeBytes(fill);
        ByteBuf region = whole.slice(GUARD, size);
        wholes.put(region, whole);
        return region;
    }

    private void assertCanaries(ByteBuf region) {
        ByteBuf whole = wholes.get(region);
        for (int i = 0; i < GUARD; i++) {
            if (whole.getByte(i) != (byte) Regions.CANARY || whole.getByte(GUARD + region.capacity() + i) != (byte) Regions.CANARY) {
                throw new AssertionError("octet written outside a region of " + region.capacity() + " octets");
            }
        }
    }

    private void assertUntouched(ByteBuf region) {
        assertCanaries(region);
        for (int i = 0; i < region.capacity(); i++) {
            if (region.getByte(i) != (byte) Regions.CANARY) {
                throw new AssertionError("octet " + i + " placed in a region the peer may not write");
            }
        }
    }

    /** Points the remote STag/TO fields of {@code ulpdu} (as its opcode defines them) at {@code mr}. */
    static void patch(byte[] ulpdu, MemoryRegion mr) {
        if (ulpdu.length < 2) {
            return;
        }
        boolean tagged = (ulpdu[0] & 0x80) != 0;
        int opcode = ulpdu[1] & 0x0F;
        if (tagged) {
            putStagTo(ulpdu, 2, 6, mr);
        } else if (opcode == RdmapOpcode.RDMA_READ_REQUEST.value()) {
            putStagTo(ulpdu, 18 + 16, 18 + 20, mr); // Data Source STag and TO (RFC 5040 §4.4)
        } else if (opcode == RdmapOpcode.ATOMIC_REQUEST.value()) {
            putStagTo(ulpdu, 18 + 8, 18 + 12, mr); // Remote STag and TO (RFC 7306 §8.2)
        } else {
            putStagTo(ulpdu, 2, -1, mr); // Invalidate STag of a Send with Invalidate (RFC 5040 §4.3)
        }
    }

    private static void putStagTo(byte[] a, int stagAt, int toAt, MemoryRegion mr) {
        long to = toAt >= 0 && toAt + 8 <= a.length
                ? mr.iova() + (((a[toAt + 6] & 0xFF) << 8) | (a[toAt + 7] & 0xFF)) - 256 : 0;
        put(a, stagAt, mr.stag(), 4);
        if (toAt >= 0) {
            put(a, toAt, to, 8);
        }
    }

    private static void put(byte[] a, int at, long v, int n) {
        for (int i = 0; i < n && at + i < a.length; i++) {
            a[at + i] = (byte) (v >>> (8 * (n - 1 - i)));
        }
    }

    private static void drain(EngineSide side) {
        side.ch.runPendingTasks();
        for (Object o; (o = side.ch.readOutbound()) != null; ) {
            ReferenceCountUtil.release(o);
        }
        side.written.clear();
        while (side.sendCq.poll() != null || side.recvCq.poll() != null) {
            // completions are not judged here; the unit tests do that
        }
    }
}
