package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** Two embedded channels as the ends of one TCP connection. */
class BackToBackTest {

    @Test
    void pumpMovesBothWaysUntilQuietAndTheOtherEndSeesAClose() {
        EmbeddedChannel a = new EmbeddedChannel();
        EmbeddedChannel b = new EmbeddedChannel();
        ByteArrayOutputStream aToB = new ByteArrayOutputStream();
        ByteArrayOutputStream bToA = new ByteArrayOutputStream();
        a.writeOutbound(Unpooled.wrappedBuffer(new byte[] {1, 2}));
        b.writeOutbound(Unpooled.wrappedBuffer(new byte[] {3}));
        BackToBack.pump(a, b, aToB, bToA);
        assertArrayEquals(new byte[] {1, 2}, aToB.toByteArray());
        assertArrayEquals(new byte[] {3}, bToA.toByteArray());
        ByteBuf atB = b.readInbound();
        assertEquals(2, atB.readableBytes());
        atB.release();
        ByteBuf atA = a.readInbound();
        assertEquals(1, atA.readableBytes());
        atA.release();

        a.close();
        BackToBack.pump(a, b, null, null);
        assertFalse(b.isOpen(), "a close reaches the other end once its octets are delivered");
        assertFalse(a.finishAndReleaseAll());
        assertFalse(b.finishAndReleaseAll());
    }
}
