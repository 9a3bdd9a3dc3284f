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

    /**
     * Runs both channels' pending tasks and moves their octets both ways ({@link #move}, logging each direction to
     * {@code aToB} and {@code bToA} when not {@code null}) until neither has anything more to send; a side that
     * closed is seen closed by the other (its FIN) once its octets are delivered.
     *
     * @throws AssertionError when the two are still busy after a million rounds
     */
    public static void pump(EmbeddedChannel a, EmbeddedChannel b, ByteArrayOutputStream aToB,
                            ByteArrayOutputStream bToA) {
        for (int round = 0; round < 1_000_000; round++) {
            a.runPendingTasks();
            b.runPendingTasks();
            boolean moved = move(a, b, aToB) | move(b, a, bToA);
            if (!moved) {
                if (a.isOpen() != b.isOpen()) {
                    (a.isOpen() ? a : b).close();
                    continue;
                }
                return;
            }
        }
        throw new AssertionError("pair did not settle");
    }
}
