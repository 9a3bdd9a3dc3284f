package dev.iwarp.mpa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A ULPDU handed over as a composite (DDP's header + payload) is written piece by piece; the FPDU
 * octets must equal those of the same ULPDU handed over as one buffer (CRC included), whatever the
 * composite's reader index and piece sizes.
 */
class MpaFramerPiecesTest {

    @ParameterizedTest
    @CsvSource({
            "true, 18, 24, 0", "true, 14, 64754, 0", "true, 14, 1000, 5", "true, 18, 0, 0", "true, 70, 100, 3",
            "false, 14, 1000, 0", "false, 18, 24, 7"})
    void compositeUlpduEncodesLikeAContiguousOne(boolean crc, int headerLength, int payloadLength, int skip) {
        Random rnd = new Random(headerLength * 31L + payloadLength + skip);
        byte[] header = new byte[headerLength];
        byte[] payload = new byte[payloadLength];
        rnd.nextBytes(header);
        rnd.nextBytes(payload);
        byte[] whole = new byte[headerLength + payloadLength - skip];
        System.arraycopy(header, skip, whole, 0, headerLength - skip);
        System.arraycopy(payload, 0, whole, headerLength - skip, payloadLength);

        EmbeddedChannel reference = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 1454, false));
        reference.writeOutbound(Unpooled.wrappedBuffer(whole));
        byte[] expected = MpaTestUtil.drainOutbound(reference);
        assertFalse(reference.finish());

        EmbeddedChannel tx = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 1454, false));
        CompositeByteBuf ulpdu = PooledByteBufAllocator.DEFAULT.compositeDirectBuffer(2);
        ByteBuf h = PooledByteBufAllocator.DEFAULT.directBuffer(headerLength).writeBytes(header);
        ByteBuf p = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(1, payloadLength)).writeBytes(payload);
        ulpdu.addComponents(true, h, p);
        ulpdu.skipBytes(skip);
        tx.writeOutbound(ulpdu);
        byte[] got = MpaTestUtil.drainOutbound(tx);
        assertArrayEquals(expected, got);
        assertFalse(tx.finish());

        EmbeddedChannel rx = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 1454, false));
        rx.writeInbound(Unpooled.wrappedBuffer(got));
        List<byte[]> ulpdus = MpaTestUtil.drainInbound(rx);
        assertEquals(1, ulpdus.size());
        assertArrayEquals(whole, ulpdus.get(0));
        assertFalse(rx.finish());
    }
}
