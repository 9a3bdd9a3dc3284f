package dev.iwarp.ddp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledHeapByteBuf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The DDP header of each segment sent (RFC 5041 §4.2, §4.3) goes into the transmitter's reused header buffer in
 * one pass: counted, the calls on that buffer that check whether it is still accessible, per header; and the
 * octets are those written field by field into a buffer without an array.
 */
class SegmentHeaderWriteTest {
    private static final int MULPDU = 1442;

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void oneCheckedCallPerHeader(boolean tagged) {
        DdpSegmenter segmenter = new DdpSegmenter(() -> MULPDU);
        int size = 3 * MULPDU + 5;
        ByteBuf a = DdpSegmenterTest.message(size);
        ByteBuf b = DdpSegmenterTest.message(size);
        DdpOutboundMessage viaArray = tagged ? segmenter.tagged(0x41, 0x12ab00, 0x55d5c0a0b2a0L, a)
                : segmenter.untagged(0x40, 0, 7, a);
        DdpSegmenter other = new DdpSegmenter(() -> MULPDU);
        DdpOutboundMessage fieldByField = tagged ? other.tagged(0x41, 0x12ab00, 0x55d5c0a0b2a0L, b)
                : other.untagged(0x40, 0, 7, b);
        Counting header = new Counting();
        ByteBuf direct = Unpooled.directBuffer(DdpUntaggedSegment.HEADER_LENGTH);
        try {
            int headers = 0;
            while (viaArray.hasNextSegment()) {
                header.clear();
                direct.clear();
                header.checked = 0;
                viaArray.nextSegment(header).release();
                assertTrue(header.checked <= 1, "checked calls for header " + headers + ": " + header.checked);
                fieldByField.nextSegment(direct).release();
                assertEquals(ByteBufUtil.hexDump(direct), ByteBufUtil.hexDump(header), "header " + headers);
                headers++;
            }
            assertEquals(4, headers);
        } finally {
            direct.release();
            for (DdpOutboundMessage m : new DdpOutboundMessage[] {viaArray, fieldByField}) {
                if (!m.isDone()) {
                    m.discard(); // a failed check left segments
                }
                m.recycle();
            }
        }
    }

    /** A heap buffer counting the calls that check its reference count (each write or set, the array). */
    private static final class Counting extends UnpooledHeapByteBuf {
        int checked;

        Counting() {
            super(ByteBufAllocator.DEFAULT, DdpUntaggedSegment.HEADER_LENGTH, DdpUntaggedSegment.HEADER_LENGTH);
        }

        @Override
        public byte[] array() {
            checked++;
            return super.array();
        }

        @Override
        public ByteBuf ensureWritable(int minWritableBytes) {
            checked++;
            return super.ensureWritable(minWritableBytes);
        }

        @Override
        public ByteBuf writeByte(int value) {
            checked++;
            return super.writeByte(value);
        }

        @Override
        public ByteBuf writeShort(int value) {
            checked++;
            return super.writeShort(value);
        }

        @Override
        public ByteBuf writeInt(int value) {
            checked++;
            return super.writeInt(value);
        }

        @Override
        public ByteBuf writeLong(long value) {
            checked++;
            return super.writeLong(value);
        }

        @Override
        public ByteBuf writeBytes(byte[] src, int srcIndex, int length) {
            checked++;
            return super.writeBytes(src, srcIndex, length);
        }

        @Override
        public ByteBuf setByte(int index, int value) {
            checked++;
            return super.setByte(index, value);
        }

        @Override
        public ByteBuf setInt(int index, int value) {
            checked++;
            return super.setInt(index, value);
        }

        @Override
        public ByteBuf setLong(int index, long value) {
            checked++;
            return super.setLong(index, value);
        }
    }
}
