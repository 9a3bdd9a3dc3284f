package dev.iwarp.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.ByteArrayOutputStream;

/** Connects two {@link EmbeddedChannel}s back to back, as a TCP connection would. */
public final class BackToBack {
    private BackToBack() {
    }

    /**
     * Moves every outbound buffer of {@code from} into {@code to}'s inbound (released when {@code to}
     * is closed), appending a copy of the octets to {@code log} when it is not {@code null}.
     *
     * @return whether anything moved
     */
    public static boolean move(EmbeddedChannel from, EmbeddedChannel to, ByteArrayOutputStream log) {
        boolean moved = false;
        for (;;) {
            ByteBuf b = from.readOutbound();
            if (b == null) {
                return moved;
            }
            moved = true;
            if (log != null) {
                byte[] a = new byte[b.readableBytes()];
                b.getBytes(b.readerIndex(), a);
                log.writeBytes(a);
            }
            if (to.isOpen()) {
                to.writeInbound(b);
            } else {
                b.release();
            }
        }
    }
}
