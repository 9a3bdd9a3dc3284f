package dev.iwarp.testkit;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.framing.UlpduSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The layer above a framing (DDP, as far as a framing sees it) for the framings' direct-read tests: a
 * {@link UlpduSink} over a 64 KiB direct region that names a destination for every tagged ULPDU (header
 * {@value #TAGGED} octets, the T bit set, the region offset in octets 2-3) and wants untagged ones
 * ({@value #UNTAGGED} octets) whole. It records what the framing did, in order: {@link #calls} ("header 14+N",
 * "placed", "ulpdu N"), the whole ULPDUs, and what each ULPDU amounted to ({@link #received}: the payload the
 * region holds once placed, else the whole ULPDU). Close it after the test: every view of the region must have
 * been released.
 */
public final class RegionSink implements UlpduSink, AutoCloseable {
    /** A tagged ULPDU header's octets (RFC 5041 §4.2). */
    public static final int TAGGED = 14;
    /** An untagged ULPDU header's octets (RFC 5041 §4.3). */
    public static final int UNTAGGED = 18;

    private final ByteBuf region = ByteBufAllocator.DEFAULT.directBuffer(65536, 65536).writeZero(65536);
    private final List<String> calls = new ArrayList<>();
    private final List<byte[]> whole = new ArrayList<>();
    private final List<byte[]> received = new ArrayList<>();
    private final List<Long> directAtPlaced = new ArrayList<>();
    private DirectReadAllocator watched;
    private int placedOffset;
    private int placedLength;

    /** A tagged ULPDU whose payload goes to {@code offset} of the region (T set, offset in octets 2-3). */
    public static byte[] tagged(int offset, int payloadLength, int seed) {
        byte[] u = new byte[TAGGED + payloadLength];
        u[0] = (byte) 0xC1;
        u[2] = (byte) (offset >> 8);
        u[3] = (byte) offset;
        for (int i = TAGGED; i < u.length; i++) {
            u[i] = (byte) (i * 31 + seed);
        }
        return u;
    }

    /** An untagged ULPDU (T clear): delivered whole. */
    public static byte[] untagged(int payloadLength) {
        byte[] u = new byte[UNTAGGED + payloadLength];
        u[0] = 0x41;
        for (int i = UNTAGGED; i < u.length; i++) {
            u[i] = (byte) (i * 7);
        }
        return u;
    }

    @Override
    public int headerLength(int firstOctet) {
        return (firstOctet & 0x80) != 0 ? TAGGED : UNTAGGED;
    }

    @Override
    public ByteBuf payloadDestination(ByteBuf ulpdu, int headerLength, int payloadLength) {
        calls.add("header " + headerLength + "+" + payloadLength);
        if (headerLength != TAGGED) {
            return null; // untagged: the whole ULPDU, please
        }
        placedOffset = ulpdu.getUnsignedShort(ulpdu.readerIndex() + 2);
        placedLength = payloadLength;
        return region.retainedSlice(placedOffset, payloadLength).clear();
    }

    @Override
    public void placed() {
        calls.add("placed");
        received.add(placed(placedOffset, placedLength));
        if (watched != null) {
            directAtPlaced.add(watched.octetsReadDirectly());
        }
    }

    @Override
    public void ulpdu(ByteBuf ulpdu) {
        calls.add("ulpdu " + ulpdu.readableBytes());
        byte[] a = ChannelOctets.bytes(ulpdu);
        whole.add(a);
        received.add(a);
    }

    /** At each {@link #placed}, the octets {@code a} had read into destinations so far ({@link #directAtPlaced}). */
    public void watch(DirectReadAllocator a) {
        watched = a;
        directAtPlaced.clear();
    }

    /** Forgets what was recorded and zeroes the region, for the next round of a test. */
    public void reset() {
        calls.clear();
        whole.clear();
        received.clear();
        directAtPlaced.clear();
        region.setZero(0, region.capacity());
    }

    /** What the framing did, in order. */
    public List<String> calls() {
        return calls;
    }

    /** The ULPDUs that came whole, in order. */
    public List<byte[]> whole() {
        return whole;
    }

    /** Per ULPDU, in order: the payload the region held when it was reported placed, else the whole ULPDU. */
    public List<byte[]> received() {
        return received;
    }

    /** The allocator's octets read directly at each {@link #placed} since {@link #watch}. */
    public List<Long> directAtPlaced() {
        return directAtPlaced;
    }

    /** The region's memory, as a test compares addresses. */
    public ByteBuf region() {
        return region;
    }

    /** A copy of the region's {@code length} octets at {@code offset}. */
    public byte[] placed(int offset, int length) {
        byte[] a = new byte[length];
        region.getBytes(offset, a);
        return a;
    }

    /** Fails unless every view of the region handed out was released; releases the region. */
    @Override
    public void close() {
        int refCnt = region.refCnt();
        region.release();
        assertEquals(1, refCnt, "every view of the region was released");
    }
}
