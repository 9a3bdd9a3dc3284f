package dev.iwarp.mpa;

import dev.iwarp.testkit.ChannelOctets;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        byte[] expected = ChannelOctets.drainOutbound(reference);
        assertFalse(reference.finish());

        EmbeddedChannel tx = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 1454, false));
        CompositeByteBuf ulpdu = PooledByteBufAllocator.DEFAULT.compositeDirectBuffer(2);
        ByteBuf h = PooledByteBufAllocator.DEFAULT.directBuffer(headerLength).writeBytes(header);
        ByteBuf p = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(1, payloadLength)).writeBytes(payload);
        ulpdu.addComponents(true, h, p);
        ulpdu.skipBytes(skip);
        tx.writeOutbound(ulpdu);
        byte[] got = ChannelOctets.drainOutbound(tx);
        assertArrayEquals(expected, got);
        assertFalse(tx.finish());

        EmbeddedChannel rx = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 1454, false));
        rx.writeInbound(Unpooled.wrappedBuffer(got));
        List<byte[]> ulpdus = ChannelOctets.drainInbound(rx);
        assertEquals(1, ulpdus.size());
        assertArrayEquals(whole, ulpdus.get(0));
        assertFalse(rx.finish());
    }

    /**
     * {@link MpaFramer#writeUlpdu} (header octets + payload, no composite) puts the same octets on
     * the wire as {@code write} of their concatenation, with CRC or without, with markers (it then
     * falls back to a composite) and while FPDUs are held by rule 4, FPDU after FPDU (pad and stream
     * position carry over).
     */
    @ParameterizedTest
    @CsvSource({
            "true, false, false", "false, false, false", "true, true, false", "true, false, true",
            "false, true, true"})
    void headerAndPayloadEncodeLikeTheirConcatenation(boolean crc, boolean markers, boolean held) {
        Random rnd = new Random(7 + (crc ? 1 : 0) + (markers ? 2 : 0) + (held ? 4 : 0));
        EmbeddedChannel reference = new EmbeddedChannel(new MpaFramer(crc, markers, false, 0xFFFF, 64768, held));
        MpaFramer framer = new MpaFramer(crc, markers, false, 0xFFFF, 64768, held);
        EmbeddedChannel tx = new EmbeddedChannel(framer);
        int[][] shapes = {{14, 0}, {18, 1}, {14, 64754}, {18, 3}, {14, 1000}, {18, 64750}, {14, 2}, {62, 5}, {63, 9},
                {14, FpduWriter.SMALL_PAYLOAD}, {18, FpduWriter.SMALL_PAYLOAD + 1}, {28, FpduWriter.SMALL_PAYLOAD - 1}};
        for (int[] shape : shapes) {
            byte[] header = new byte[shape[0]];
            byte[] payload = new byte[shape[1]];
            rnd.nextBytes(header);
            rnd.nextBytes(payload);
            byte[] whole = new byte[header.length + payload.length];
            System.arraycopy(header, 0, whole, 0, header.length);
            System.arraycopy(payload, 0, whole, header.length, payload.length);
            reference.writeAndFlush(Unpooled.wrappedBuffer(whole));

            ByteBuf h = Unpooled.wrappedBuffer(new byte[3 + header.length]).skipBytes(3);
            h.setBytes(3, header);
            ByteBuf region = PooledByteBufAllocator.DEFAULT.directBuffer(payload.length + 8).writeZero(5)
                    .writeBytes(payload);
            ByteBuf p = region.retainedSlice(5, payload.length);
            region.release();
            boolean predicted = framer.copiesUlpdu(shape[0], shape[1]);
            boolean copied = framer.writeUlpdu(h, p, tx.newPromise());
            assertEquals(predicted, copied, "copiesUlpdu says beforehand what writeUlpdu does");
            assertEquals(!markers && !held && shape[0] <= 62 && shape[1] <= FpduWriter.SMALL_PAYLOAD, copied,
                    "copied into one FPDU buffer: header " + shape[0] + ", payload " + shape[1]);
            assertEquals(copied, p.refCnt() == 0, "a copied payload is released before the flush, another is held");
            tx.flush();
            assertEquals(3, h.readerIndex(), "the header is copied, not consumed");
        }
        if (held) { // rule 4: one valid FPDU from the peer releases what was held
            EmbeddedChannel peer = new EmbeddedChannel(new MpaFramer(crc, false, false, 0xFFFF, 1454, false));
            peer.writeOutbound(Unpooled.wrappedBuffer(new byte[20]));
            byte[] ping = ChannelOctets.drainOutbound(peer);
            assertFalse(peer.finish());
            reference.writeInbound(Unpooled.wrappedBuffer(ping));
            tx.writeInbound(Unpooled.wrappedBuffer(ping));
            ChannelOctets.drainInbound(reference);
            ChannelOctets.drainInbound(tx);
        }
        assertArrayEquals(ChannelOctets.drainOutbound(reference), ChannelOctets.drainOutbound(tx));
        assertFalse(reference.finish());
        assertFalse(tx.finish());
    }
    /**
     * A payload of at most {@link FpduWriter#SMALL_PAYLOAD} octets leaves as one buffer (header, payload, pad
     * and CRC), the payload released once copied; a larger one leaves as header, payload and trailer, the
     * payload's memory itself handed on. The octets are checked above.
     */
    @ParameterizedTest
    @CsvSource({"true, 0, 1", "true, 64, 1", "false, 1024, 1", "true, 1024, 1", "true, 1025, 3", "false, 4096, 3"})
    void smallPayloadsLeaveAsOneBuffer(boolean crc, int payloadLength, int buffers) {
        MpaFramer framer = new MpaFramer(crc, false, false, 0xFFFF, 64768, false);
        EmbeddedChannel tx = new EmbeddedChannel(framer);
        ByteBuf header = Unpooled.wrappedBuffer(new byte[18]);
        ByteBuf payload = PooledByteBufAllocator.DEFAULT.directBuffer(payloadLength).writeZero(payloadLength);
        long payloadAddress = payload.memoryAddress() + payload.readerIndex();
        ChannelPromise promise = tx.newPromise();
        assertEquals(payloadLength <= FpduWriter.SMALL_PAYLOAD, framer.copiesUlpdu(18, payloadLength));
        assertEquals(payloadLength <= FpduWriter.SMALL_PAYLOAD, framer.writeUlpdu(header, payload, promise),
                "writeUlpdu says whether it copied the payload");
        assertFalse(promise.isDone(), "the write completes with the flush, copied or not");
        tx.flush();
        assertTrue(promise.isSuccess());
        int count = 0;
        int octets = 0;
        ByteBuf out;
        while ((out = tx.readOutbound()) != null) {
            count++;
            octets += out.readableBytes();
            if (payloadLength > FpduWriter.SMALL_PAYLOAD && count == 2) {
                assertEquals(payloadAddress, out.memoryAddress() + out.readerIndex(), "a large payload is not copied");
            }
            out.release();
        }
        assertEquals(buffers, count);
        assertEquals(MpaFramer.LENGTH_FIELD + 18 + payloadLength + ((-(2 + 18 + payloadLength)) & 3)
                + MpaFramer.CRC_LENGTH, octets);
        assertEquals(0, payload.refCnt(), "the payload is released either way");
        assertFalse(tx.finish());
    }
}
