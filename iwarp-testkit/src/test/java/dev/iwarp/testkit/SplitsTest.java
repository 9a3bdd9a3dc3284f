package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SplitsTest {

    private static final byte[] V = {1, 2, 3, 4, 5};

    @Test
    void everyTwoWaySplitCutsAtEachBoundaryIncludingBothEnds() {
        List<byte[][]> splits = Splits.everyTwoWaySplit(V);
        assertEquals(V.length + 1, splits.size());
        for (int i = 0; i <= V.length; i++) {
            byte[][] pair = splits.get(i);
            assertEquals(i, pair[0].length);
            assertEquals(V.length - i, pair[1].length);
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            joined.writeBytes(pair[0]);
            joined.writeBytes(pair[1]);
            assertArrayEquals(V, joined.toByteArray());
        }
        assertEquals(1, Splits.everyTwoWaySplit(new byte[0]).size());
    }

    @Test
    void oneBytePieces() {
        byte[][] pieces = Splits.oneBytePieces(V);
        assertEquals(V.length, pieces.length);
        for (int i = 0; i < V.length; i++) {
            assertArrayEquals(new byte[] {V[i]}, pieces[i]);
        }
    }

    @Test
    void forEachSplitDeliversWholeThenTwoWaySplitsThenOneBytePieces() {
        List<List<Integer>> shapes = new ArrayList<>(); // readable bytes of each buffer, per delivery
        Splits.forEachSplit(V, bufs -> {
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            List<Integer> shape = new ArrayList<>();
            for (ByteBuf b : bufs) {
                shape.add(b.readableBytes());
                joined.writeBytes(ByteBufUtil.getBytes(b));
                b.release();
            }
            assertArrayEquals(V, joined.toByteArray());
            shapes.add(shape);
        });
        assertEquals(V.length + 3, shapes.size());
        assertEquals(List.of(5), shapes.get(0));
        assertEquals(List.of(0, 5), shapes.get(1));
        assertEquals(List.of(2, 3), shapes.get(3));
        assertEquals(List.of(5, 0), shapes.get(6));
        assertEquals(List.of(1, 1, 1, 1, 1), shapes.get(7));
    }

    @Test
    void forEachSplitGivesFreshBuffersOverCopies() {
        byte[] v = {9, 9};
        Splits.forEachSplit(v, bufs -> bufs.forEach(b -> {
            if (b.isReadable()) {
                b.setByte(b.readerIndex(), 0); // scribbling on one delivery...
            }
            b.release(); // the feeder owns the buffers
        }));
        assertArrayEquals(new byte[] {9, 9}, v); // ...touches neither the vector nor the next delivery
        Splits.forEachSplit(v, bufs -> bufs.forEach(b -> {
            for (int i = b.readerIndex(); i < b.writerIndex(); i++) {
                assertEquals(9, b.getByte(i));
            }
            b.release();
        }));
    }

    @Test
    void forEachSplitNamesTheDeliveryThatFailed() {
        AssertionError e = assertThrows(AssertionError.class, () -> Splits.forEachSplit(V, bufs -> {
            boolean choke = bufs.size() == 2 && bufs.get(0).readableBytes() == 3;
            bufs.forEach(io.netty.buffer.ByteBuf::release);
            if (choke) {
                throw new IllegalStateException("decoder choked");
            }
        }));
        assertTrue(e.getMessage().contains("split [0,3) [3,5)") && e.getMessage().contains("decoder choked"),
                e.getMessage());
        assertTrue(e.getCause() instanceof IllegalStateException);
    }
}
