package dev.iwarp.bootstrap;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import io.netty.channel.Channel;
import io.netty.channel.WriteBufferWaterMark;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Both ends of a connection get the stack's write-buffer water marks: the default, which lets a
 * 64 KiB Write leave without making the channel unwritable at once, or the builder's.
 */
class WriteBufferWaterMarkTest {

    @Test
    void connectionsGetTheDefaultWaterMarks() throws Exception {
        assertMarks(IwarpStack.builder(), IwarpStack.DEFAULT_WRITE_BUFFER_WATER_MARK);
        assertEquals(768 * 1024, IwarpStack.DEFAULT_WRITE_BUFFER_WATER_MARK.high());
        assertEquals(384 * 1024, IwarpStack.DEFAULT_WRITE_BUFFER_WATER_MARK.low());
    }

    @Test
    void theBuilderSetsOthers() throws Exception {
        WriteBufferWaterMark marks = new WriteBufferWaterMark(8 * 1024, 16 * 1024);
        assertMarks(IwarpStack.builder().writeBufferWaterMark(marks), marks);
    }

    private static void assertMarks(IwarpStack.Builder builder, WriteBufferWaterMark expected) throws Exception {
        try (IwarpStack stack = builder.threads(1).build()) {
            ProtectionDomain pd = stack.allocPd();
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            Channel listener = stack.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    MpaSettings.defaults(), req -> accepted.complete(
                            req.accept(pd, new CompletionQueue(), new CompletionQueue(), new byte[0])));
            QueuePair qp = stack.connect(listener.localAddress(), ConnectOptions.of(pd)).get(10, TimeUnit.SECONDS);
            QueuePair sqp = accepted.get(10, TimeUnit.SECONDS);
            for (Channel ch : new Channel[] {qp.channel(), sqp.channel()}) {
                WriteBufferWaterMark actual = ch.config().getWriteBufferWaterMark();
                assertEquals(expected.low(), actual.low(), ch + " low");
                assertEquals(expected.high(), actual.high(), ch + " high");
            }
            qp.close().sync();
            listener.close().sync();
        }
    }
}
