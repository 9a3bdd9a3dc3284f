package dev.iwarp.vitcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Feeds a byte vector to a fresh decoder split at every byte boundary (and byte by byte). */
final class Splits {
    private Splits() {
    }

    static byte[] hex(String... parts) {
        return HexFormat.of().parseHex(String.join("", parts).replace(" ", ""));
    }

    /**
     * For every split point 0..n (and once byte by byte) feeds {@code bytes} into a new channel holding the handler
     * from {@code decoder}, collects all inbound messages and hands them to {@code check}, then releases them.
     */
    static void forEachSplit(Supplier<ChannelHandler> decoder, byte[] bytes, Consumer<List<Object>> check) {
        for (int split = 0; split <= bytes.length + 1; split++) {
            EmbeddedChannel ch = new EmbeddedChannel(decoder.get());
            List<Object> out = new ArrayList<>();
            try {
                if (split <= bytes.length) {
                    write(ch, bytes, 0, split, out);
                    write(ch, bytes, split, bytes.length - split, out);
                } else {
                    for (int i = 0; i < bytes.length; i++) {
                        write(ch, bytes, i, 1, out);
                    }
                }
                Object m;
                while ((m = ch.readInbound()) != null) {
                    out.add(m);
                }
                try {
                    check.accept(out);
                } catch (AssertionError e) {
                    throw new AssertionError("split at " + (split <= bytes.length ? split : "every byte") + ": "
                            + e.getMessage(), e);
                }
            } finally {
                for (Object o : out) {
                    if (!(o instanceof Throwable)) {
                        io.netty.util.ReferenceCountUtil.release(o);
                    }
                }
                ch.finishAndReleaseAll();
            }
        }
    }

    private static void write(EmbeddedChannel ch, byte[] bytes, int off, int len, List<Object> out) {
        if (len == 0) {
            return;
        }
        ByteBuf b = Unpooled.buffer(len).writeBytes(bytes, off, len);
        VitcpProtocolException error = null;
        try {
            ch.writeInbound(b);
        } catch (VitcpProtocolException e) {
            error = e;
        }
        Object m;
        while ((m = ch.readInbound()) != null) {
            out.add(m);
        }
        if (error != null) {
            out.add(error);
        }
    }
}
