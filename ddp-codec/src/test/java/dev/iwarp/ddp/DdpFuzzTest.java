package dev.iwarp.ddp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.iwarp.testkit.fuzz.FuzzChecks;
import dev.iwarp.testkit.fuzz.FuzzInput;
import dev.iwarp.testkit.fuzz.FuzzLogs;
import dev.iwarp.testkit.fuzz.TrackingAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzz target for DDP (Jazzer): {@link DdpCodec} on hostile ULPDUs, then tagged placement through
 * {@link TaggedBufferTable} and untagged placement through {@link UntaggedReceiveQueue} into guarded
 * memory. Each input must end in no exception other than {@link DdpException}, no buffer left
 * referenced, every decoded segment re-encoding to the octets it came from, and no octet written
 * outside the region a check allowed (canaries around every region and receive buffer).
 */
@ExtendWith(FuzzLogs.class)
class DdpFuzzTest {
    static final List<Class<? extends Throwable>> TYPED = List.of(DdpException.class);
    static final int GUARD = 16;
    static final byte CANARY = (byte) 0xEE;
    static final Object PD = new Object();
    /** The Rsvd bits between L and DV in the first octet of every DDP header. */
    static final int RESERVED_CONTROL_BITS = 0x3C;

    /**
     * Octet 0: size of the receive buffers posted on QN 0-2 (x 4). Then records of [length octet,
     * patch octet, ULPDU]: patch bit 0 sets a tagged ULPDU's STag to region (bits 1-2) and its TO to
     * that region's base TO plus the record's original low 16 TO bits minus 256, so the fuzzer reaches
     * the bounds checks without guessing random STags.
     */
    @FuzzTest
    void codecAndPlacement(byte[] data) {
        FuzzInput in = new FuzzInput(data);
        int recvSize = in.u8() * 4;
        TrackingAllocator alloc = new TrackingAllocator();
        TaggedBufferTable table = new TaggedBufferTable(new Random(1));
        int[] sizes = {0, 1, 64, 1000};
        int[] access = {AccessFlags.REMOTE_WRITE, AccessFlags.ALL, AccessFlags.REMOTE_READ, AccessFlags.REMOTE_WRITE};
        long[] bases = {0, 0x1000, -1L - 999, 0x7FFF_FFFF_FFFF_FF00L};
        List<ByteBuf> guarded = new ArrayList<>();
        List<TaggedBuffer> regions = new ArrayList<>();
        List<UntaggedReceiveQueue<Integer>> queues = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(new DdpCodec());
        try {
            for (int i = 0; i < sizes.length; i++) {
                ByteBuf whole = guardedBuffer(alloc, sizes[i]);
                guarded.add(whole);
                regions.add(table.register(PD, whole.slice(GUARD, sizes[i]), bases[i], access[i], false));
            }
            for (int qn = 0; qn < 3; qn++) {
                UntaggedReceiveQueue<Integer> q = new UntaggedReceiveQueue<>(qn);
                for (int k = 0; k < 2; k++) {
                    ByteBuf whole = guardedBuffer(alloc, recvSize);
                    guarded.add(whole);
                    q.post(whole, GUARD, recvSize, k);
                }
                queues.add(q);
            }
            while (in.hasMore()) {
                int length = in.u8();
                int patch = in.u8();
                byte[] ulpdu = in.bytes(length);
                if ((patch & 1) != 0 && ulpdu.length >= DdpTaggedSegment.HEADER_LENGTH && (ulpdu[0] & 0x80) != 0) {
                    TaggedBuffer r = regions.get((patch >>> 1) & 3);
                    long to = r.baseTo() + (((ulpdu[12] & 0xFF) << 8) | (ulpdu[13] & 0xFF)) - 256;
                    for (int i = 0; i < 4; i++) {
                        ulpdu[2 + i] = (byte) (r.stag() >>> (24 - 8 * i));
                    }
                    for (int i = 0; i < 8; i++) {
                        ulpdu[6 + i] = (byte) (to >>> (56 - 8 * i));
                    }
                }
                DdpSegment seg;
                try {
                    ch.writeInbound(alloc.track(alloc.heapBuffer(ulpdu.length).writeBytes(ulpdu)));
                    seg = ch.readInbound();
                } catch (DdpException e) {
                    assertEquals(true, ulpdu.length < ((ulpdu.length > 0 && (ulpdu[0] & 0x80) != 0) ? 14 : 18),
                            "only a ULPDU shorter than its header is refused by the codec");
                    continue;
                }
                try {
                    ByteBuf again = DdpCodec.encode(seg, alloc);
                    byte[] expected = ulpdu.clone();
                    expected[0] &= (byte) ~RESERVED_CONTROL_BITS; // RFC 5041 §4.2: zero on transmit, not checked
                    assertArrayEquals(expected, ByteBufUtil.getBytes(again), "decode then encode gives the ULPDU back");
                    again.release();
                    place(seg, table, queues);
                } finally {
                    seg.release();
                }
            }
            for (ByteBuf whole : guarded) {
                assertCanaries(whole);
            }
            for (int i = 0; i < regions.size(); i++) {
                if ((access[i] & AccessFlags.REMOTE_WRITE) == 0) {
                    assertUntouched(regions.get(i).memory());
                }
            }
        } catch (Throwable t) {
            FuzzChecks.assertTyped(t, TYPED);
        } finally {
            ch.finishAndReleaseAll();
            for (TaggedBuffer r : regions) {
                table.deregister(r.stag());
            }
            guarded.forEach(ByteBuf::release);
        }
        FuzzChecks.assertNoUntypedLogged(TYPED);
        alloc.assertAllReleased();
    }

    /** What an RDMAP responder does with a segment: the DDP checks, then placement when they pass. */
    private static void place(DdpSegment seg, TaggedBufferTable table, List<UntaggedReceiveQueue<Integer>> queues) {
        if (seg instanceof DdpTaggedSegment) {
            DdpTaggedSegment t = (DdpTaggedSegment) seg;
            TaggedAccessResult r = table.check(t.stag(), PD, t.to(), t.payloadLength(), AccessFlags.REMOTE_WRITE);
            if (r.isOk()) {
                table.lookup(t.stag()).place(t.to(), t.content());
            }
            return;
        }
        DdpUntaggedSegment u = (DdpUntaggedSegment) seg;
        if (u.qn() >= 0 && u.qn() < queues.size()) {
            queues.get(u.qn()).place(u);
        }
    }

    static ByteBuf guardedBuffer(TrackingAllocator alloc, int size) {
        ByteBuf whole = alloc.heapBuffer(size + 2 * GUARD, size + 2 * GUARD);
        whole.writeBytes(new byte[size + 2 * GUARD]);
        whole.setBytes(0, filled(size + 2 * GUARD));
        return whole;
    }

    private static byte[] filled(int n) {
        byte[] a = new byte[n];
        java.util.Arrays.fill(a, CANARY);
        return a;
    }

    static void assertCanaries(ByteBuf whole) {
        int size = whole.capacity() - 2 * GUARD;
        for (int i = 0; i < GUARD; i++) {
            assertEquals(CANARY, whole.getByte(i), "octet " + (GUARD - i) + " before a region");
            assertEquals(CANARY, whole.getByte(GUARD + size + i), "octet " + i + " after a region");
        }
    }

    static void assertUntouched(ByteBuf region) {
        for (int i = 0; i < region.capacity(); i++) {
            assertEquals(CANARY, region.getByte(i), "octet " + i + " of a region without remote write");
        }
    }
}
