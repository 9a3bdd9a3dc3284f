package dev.iwarp.mpa.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FpduCumulation} reads as the concatenation of its parts, at every index and across every boundary. */
class FpduCumulationTest {
    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private final Random rnd = new Random(21);

    /** Parts of uneven lengths (1 octet included), each with octets before its reader index that are not its. */
    private FpduCumulation cumulation(byte[] data, int... lengths) {
        FpduCumulation c = new FpduCumulation(ALLOC);
        int at = 0;
        for (int n : lengths) {
            ByteBuf part = (rnd.nextBoolean() ? ALLOC.directBuffer(n + 7) : ALLOC.heapBuffer(n + 7))
                    .writeBytes(new byte[] {9, 9, 9}).writeBytes(data, at, n);
            part.skipBytes(3);
            c.add(part);
            at += n;
        }
        return c;
    }

    @Test
    void everyGetterAgreesWithAPlainBufferAtEveryIndex() throws IOException {
        byte[] data = new byte[64];
        rnd.nextBytes(data);
        ByteBuf plain = Unpooled.wrappedBuffer(data);
        FpduCumulation c = cumulation(data, 5, 1, 1, 3, 9, 2, 7, 36);
        try {
            assertEquals(64, c.capacity());
            assertEquals(64, c.readableBytes());
            for (int i = 0; i < 64; i++) {
                assertEquals(plain.getByte(i), c.getByte(i), "byte at " + i);
                if (i + 2 <= 64) {
                    assertEquals(plain.getShort(i), c.getShort(i), "short at " + i);
                    assertEquals(plain.getShortLE(i), c.getShortLE(i), "shortLE at " + i);
                }
                if (i + 3 <= 64) {
                    assertEquals(plain.getUnsignedMedium(i), c.getUnsignedMedium(i), "medium at " + i);
                    assertEquals(plain.getUnsignedMediumLE(i), c.getUnsignedMediumLE(i), "mediumLE at " + i);
                }
                if (i + 4 <= 64) {
                    assertEquals(plain.getInt(i), c.getInt(i), "int at " + i);
                    assertEquals(plain.getIntLE(i), c.getIntLE(i), "intLE at " + i);
                }
                if (i + 8 <= 64) {
                    assertEquals(plain.getLong(i), c.getLong(i), "long at " + i);
                    assertEquals(plain.getLongLE(i), c.getLongLE(i), "longLE at " + i);
                }
            }
            for (int from = 0; from <= 64; from++) {
                for (int to = from; to <= 64; to++) {
                    byte[] expected = Arrays.copyOfRange(data, from, to);
                    int n = to - from;
                    byte[] a = new byte[n + 2];
                    c.getBytes(from, a, 1, n);
                    assertArrayEquals(expected, Arrays.copyOfRange(a, 1, n + 1), "array " + from + "-" + to);
                    ByteBuf d = ALLOC.directBuffer(n + 2);
                    try {
                        c.getBytes(from, d, 2, n);
                        assertArrayEquals(expected, ByteBufUtilBytes(d, 2, n), "buffer " + from + "-" + to);
                    } finally {
                        d.release();
                    }
                    ByteBuffer nio = ByteBuffer.allocateDirect(n + 4).position(1);
                    nio.limit(1 + n);
                    c.getBytes(from, nio);
                    assertEquals(1 + n, nio.position());
                    byte[] fromNio = new byte[n];
                    nio.position(1);
                    nio.get(fromNio);
                    assertArrayEquals(expected, fromNio, "ByteBuffer " + from + "-" + to);
                    ByteBuffer merged = ByteBuffer.allocate(n);
                    for (ByteBuffer b : c.nioBuffers(from, n)) {
                        merged.put(b);
                    }
                    assertArrayEquals(expected, merged.array(), "nioBuffers " + from + "-" + to);
                    ByteBuffer one = c.nioBuffer(from, n);
                    byte[] oneBytes = new byte[one.remaining()];
                    one.get(oneBytes);
                    assertArrayEquals(expected, oneBytes, "nioBuffer " + from + "-" + to);
                    ByteBuf copy = c.copy(from, n);
                    try {
                        assertArrayEquals(expected, ByteBufUtilBytes(copy, 0, n), "copy " + from + "-" + to);
                    } finally {
                        copy.release();
                    }
                    assertArrayEquals(expected, ByteBufUtilBytes(c.slice(from, n), 0, n), "slice " + from + "-" + to);
                }
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            c.getBytes(3, out, 50);
            assertArrayEquals(Arrays.copyOfRange(data, 3, 53), out.toByteArray());
            assertEquals(8, c.nioBufferCount());
        } finally {
            assertTrue(c.release());
        }
    }

    @Test
    void itIsReadOnly() {
        FpduCumulation c = cumulation(new byte[10], 4, 6);
        try {
            assertTrue(c.isReadOnly());
            assertThrows(ReadOnlyBufferException.class, () -> c.setByte(0, 1));
            assertThrows(ReadOnlyBufferException.class, () -> c.setInt(2, 1));
            assertThrows(ReadOnlyBufferException.class, () -> c.setBytes(0, new byte[2]));
            assertThrows(ReadOnlyBufferException.class, () -> c.capacity(100));
            assertFalse(c.hasArray());
            assertFalse(c.hasMemoryAddress());
        } finally {
            c.release();
        }
    }

    @Test
    void partsReadEntirelyAreGivenBackAndTheRestKeepsItsOctets() {
        byte[] data = new byte[300];
        rnd.nextBytes(data);
        FpduCumulation c = cumulation(data, 100, 50, 150);
        ByteBuf p0 = c.part(0);
        ByteBuf p1 = c.part(1);
        ByteBuf p2 = c.part(2);
        c.readerIndex(149).markReaderIndex();
        c.discardSomeReadBytes();
        assertEquals(0, p0.refCnt());
        assertEquals(1, p1.refCnt());
        assertEquals(2, c.parts());
        assertEquals(49, c.readerIndex());
        assertEquals(200, c.writerIndex());
        assertEquals(200, c.capacity());
        c.readerIndex(0);
        c.resetReaderIndex(); // the mark moved with the octets
        assertEquals(49, c.readerIndex());
        assertEquals(data[149], c.readByte());
        c.readerIndex(40);
        c.discardReadBytes(); // part 1 still has octets to read
        assertEquals(1, p1.refCnt());
        assertEquals(2, c.parts());
        c.readerIndex(50);
        c.discardReadBytes(); // now it has none
        assertEquals(0, p1.refCnt());
        assertEquals(1, c.parts());
        assertEquals(0, c.readerIndex());
        byte[] rest = new byte[c.readableBytes()];
        c.readBytes(rest);
        assertArrayEquals(Arrays.copyOfRange(data, 150, 300), rest);
        c.discardSomeReadBytes();
        assertEquals(0, c.parts());
        assertEquals(0, c.capacity());
        assertTrue(c.release());
        assertEquals(0, p2.refCnt());
        assertTrue(c.reusable());
        FpduCumulation again = c.reuse(ALLOC);
        assertEquals(1, again.refCnt());
        assertEquals(0, again.readableBytes());
        again.release();
    }

    private static byte[] ByteBufUtilBytes(ByteBuf b, int index, int n) {
        byte[] a = new byte[n];
        b.getBytes(index, a);
        return a;
    }
}
