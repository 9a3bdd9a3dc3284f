package dev.iwarp.ddp.llp;

import dev.iwarp.ddp.DdpError;
import dev.iwarp.ddp.DdpException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The receive contract as a framing holding whole ULPDUs drives it: header first, then the payload. */
class UlpduDeliveryTest {
    /** RFC 5041 §4.2 tagged header: control 0xC1 (T, L, version 1), RsvdULP 0x40, STag 0x1234, TO 0x10. */
    private static final byte[] TAGGED = {(byte) 0xC1, 0x40, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0, 0x10,
            1, 2, 3, 4, 5};
    /** RFC 5041 §4.3 untagged header (Send, QN 0, MSN 1, MO 0) and 2 payload octets. */
    private static final byte[] UNTAGGED = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 9, 8};

    /** Records every call; answers with the placement a test chose. */
    private static final class Recorder implements UlpduReceiver {
        final Placement placement = new Placement();
        final List<String> calls = new ArrayList<>();
        final ByteBuf region = Unpooled.buffer(32).writeZero(32);
        Placement.Kind answer;

        @Override
        public Placement onHeader(ByteBuf ulpdu, int headerLength, int payloadLength) {
            calls.add("header " + headerLength + "+" + payloadLength + " at " + ulpdu.readerIndex());
            switch (answer) {
                case PLACE:
                    return placement.place((offset, src, srcIndex, len) -> {
                        calls.add("placeAt " + offset + " " + len);
                        region.setBytes(offset, src, srcIndex, len);
                    }, 8);
                case DELIVER:
                    return placement.deliver();
                default:
                    return placement.discard();
            }
        }

        @Override
        public void onPlaced() {
            calls.add("placed");
        }

        @Override
        public void onPayload(ByteBuf ulpdu) {
            calls.add("payload " + ByteBufUtil.hexDump(ulpdu));
        }
    }

    @Test
    void taggedPayloadGoesWhereTheHeaderSaid() {
        Recorder r = new Recorder();
        r.answer = Placement.Kind.PLACE;
        ByteBuf in = Unpooled.wrappedBuffer(TAGGED);
        UlpduDelivery.deliver(in, r);
        assertEquals(List.of("header 14+5 at 0", "placeAt 8 5", "placed"), r.calls);
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, ByteBufUtil.getBytes(r.region, 8, 5));
        assertEquals(0, r.region.getByte(7));
        assertEquals(0, r.region.getByte(13));
        assertEquals(0, in.readerIndex(), "indices unchanged");
        assertEquals(1, in.refCnt(), "the caller keeps its reference");
    }

    @Test
    void deliveredUlpduKeepsItsHeader() {
        Recorder r = new Recorder();
        r.answer = Placement.Kind.DELIVER;
        UlpduDelivery.deliver(Unpooled.wrappedBuffer(UNTAGGED), r);
        assertEquals(List.of("header 18+2 at 0", "payload " + ByteBufUtil.hexDump(UNTAGGED)), r.calls);
    }

    @Test
    void discardedPayloadIsNotTouched() {
        Recorder r = new Recorder();
        r.answer = Placement.Kind.DISCARD;
        UlpduDelivery.deliver(Unpooled.wrappedBuffer(TAGGED), r);
        assertEquals(List.of("header 14+5 at 0"), r.calls);
        assertEquals(0, r.region.getByte(8));
    }

    /** A unit too short for the header its T bit announces never reaches the receiver (RFC 5041 §4). */
    @Test
    void shortUlpduIsALocalError() {
        Recorder r = new Recorder();
        r.answer = Placement.Kind.PLACE;
        DdpException e = assertThrows(DdpException.class,
                () -> UlpduDelivery.deliver(Unpooled.wrappedBuffer(TAGGED, 0, 13), r));
        assertEquals(DdpError.LOCAL_CATASTROPHIC, e.error());
        assertEquals(List.of(), r.calls);
    }
}
