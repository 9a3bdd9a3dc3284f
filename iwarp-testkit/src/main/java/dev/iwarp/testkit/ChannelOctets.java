package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/** The octets an {@link EmbeddedChannel} wrote or passed up, as arrays, for comparing with known answers. */
public final class ChannelOctets {
    private ChannelOctets() {
    }

    /** Concatenates and releases every outbound buffer of the channel. */
    public static byte[] drainOutbound(EmbeddedChannel ch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (;;) {
            Object o = ch.readOutbound();
            if (o == null) {
                return out.toByteArray();
            }
            ByteBuf b = (ByteBuf) o;
            try {
                out.writeBytes(bytes(b));
            } finally {
                b.release();
            }
        }
    }

    /** Reads, copies and releases every inbound buffer of the channel, one array each. */
    public static List<byte[]> drainInbound(EmbeddedChannel ch) {
        List<byte[]> list = new ArrayList<>();
        for (;;) {
            Object o = ch.readInbound();
            if (o == null) {
                return list;
            }
            ByteBuf b = (ByteBuf) o;
            try {
                list.add(bytes(b));
            } finally {
                b.release();
            }
        }
    }

    /** A copy of {@code b}'s readable octets; its indices do not move. */
    public static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), a);
        return a;
    }

    /** A buffer over a copy of {@code a} (the test keeps its array unchanged whatever a handler does). */
    public static ByteBuf buf(byte[] a) {
        return Unpooled.wrappedBuffer(a.clone());
    }
}
