package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Feeds a test vector to a decoder in pieces, for the project rule "decoders are tested with the
 * input split at every byte boundary".
 *
 * <p>Typical use, with an {@code EmbeddedChannel} per delivery:
 * <pre>{@code
 * Splits.forEachSplit(vector, pieces -> {
 *     EmbeddedChannel ch = new EmbeddedChannel(new MyDecoder());
 *     pieces.forEach(ch::writeInbound);
 *     assertEquals(expected, ch.readInbound());
 *     assertFalse(ch.finishAndReleaseAll());
 * });
 * }</pre>
 */
public final class Splits {

    private Splits() {
    }

    /**
     * For each {@code i} in {@code 0..v.length} (both ends included, so the first and last pairs
     * each have an empty half), the pair {@code v[0,i)}, {@code v[i,len)}; {@code v.length + 1} pairs.
     */
    public static List<byte[][]> everyTwoWaySplit(byte[] v) {
        List<byte[][]> out = new ArrayList<>(v.length + 1);
        for (int i = 0; i <= v.length; i++) {
            out.add(new byte[][] {Arrays.copyOfRange(v, 0, i), Arrays.copyOfRange(v, i, v.length)});
        }
        return out;
    }

    /** {@code v} as {@code v.length} one-byte arrays. */
    public static byte[][] oneBytePieces(byte[] v) {
        byte[][] out = new byte[v.length][];
        for (int i = 0; i < v.length; i++) {
            out[i] = new byte[] {v[i]};
        }
        return out;
    }

    /**
     * Calls {@code feeder} once per way of delivering {@code v}: the whole vector as one buffer, then
     * every two-way split ({@link #everyTwoWaySplit}), then the one-byte pieces
     * ({@link #oneBytePieces}); {@code v.length + 3} calls.
     *
     * <p>Each call gets fresh pooled buffers (leak-tracked under the paranoid detector) holding copies
     * of the bytes, which the feeder owns (e.g. {@code EmbeddedChannel.writeInbound} releases them).
     * If the feeder throws an exception or an assertion error, it is rethrown as an
     * {@link AssertionError} naming the delivery, e.g. {@code "split [0,7) [7,24)"}.
     */
    public static void forEachSplit(byte[] v, Consumer<List<ByteBuf>> feeder) {
        feed("whole [0," + v.length + ")", List.of(v.clone()), feeder);
        for (byte[][] pair : everyTwoWaySplit(v)) {
            int i = pair[0].length;
            feed("split [0," + i + ") [" + i + "," + v.length + ")", List.of(pair), feeder);
        }
        feed("one-byte pieces", List.of(oneBytePieces(v)), feeder);
    }

    private static void feed(String name, List<byte[]> pieces, Consumer<List<ByteBuf>> feeder) {
        List<ByteBuf> bufs = new ArrayList<>(pieces.size());
        for (byte[] p : pieces) {
            bufs.add(PooledByteBufAllocator.DEFAULT.buffer(p.length).writeBytes(p));
        }
        try {
            feeder.accept(bufs);
        } catch (RuntimeException | AssertionError e) {
            throw new AssertionError("delivery " + name + " of " + total(pieces) + " bytes failed: " + e, e);
        }
    }

    private static int total(List<byte[]> pieces) {
        return pieces.stream().mapToInt(p -> p.length).sum();
    }
}
