package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.IwarpStack;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client's connect times out on a loaded machine: the server's answer in another framing reached the client's
 * socket before the timeout, but the client's event loop had not read it yet. The client still names the server's
 * framing (before: "no MPA Reply within ... ms", which sends the user looking for a slow server).
 */
class FirstOctetsTimeoutTest {
    private static final long TIMEOUT_MS = 3_000;
    /**
     * How long the client's loop gets, after the timeout, to read what arrived (2 s in the product): what the test
     * proves does not depend on it, and a loop starved of CPU on a saturated machine may need longer.
     */
    private static final long READ_GRACE_MS = 60_000;

    /** A VI/TCP server's answer to an MPA client (draft-dicecco-vitcp-01 §4.3 ConnectReject), then silence. */
    private static Thread vitcpServer(ServerSocket listener, CountDownLatch answered) {
        Thread t = new Thread(() -> {
            ByteBuf reject = PeerFraming.VITCP.refusal();
            try (Socket s = listener.accept()) {
                s.getOutputStream().write(ByteBufUtil.getBytes(reject));
                s.getOutputStream().flush();
                answered.countDown();
                s.setSoTimeout(30_000);
                InputStream in = s.getInputStream();
                while (in.read(new byte[4096]) >= 0) { // until the client closes
                }
            } catch (IOException e) {
                // the client closed
            } finally {
                reject.release();
            }
        }, "fake-vitcp-server");
        t.start();
        return t;
    }

    /**
     * Holds the client's only event loop from the moment its connection is up until the caller timed out and asked
     * the loop to catch up (a task is pending), at most 60 s: the server's octets wait unread in the socket meanwhile.
     */
    private static final class BusyLoop extends ChannelInboundHandlerAdapter {
        private final CountDownLatch answered;
        private final long connectStart;
        volatile String released = "not yet";

        BusyLoop(CountDownLatch answered, long connectStart) {
            this.answered = answered;
            this.connectStart = connectStart;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            assertTrue(answered.await(60, TimeUnit.SECONDS), "the server did not answer");
            Thread.sleep(100); // the answer is in our socket's receive buffer now
            SingleThreadEventExecutor loop = (SingleThreadEventExecutor) ctx.executor();
            for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); System.nanoTime() < end; Thread.sleep(5)) {
                boolean timedOut = System.nanoTime() - connectStart > TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
                if (timedOut && loop.pendingTasks() > 0) {
                    released = "by a task after " + (System.nanoTime() - connectStart) / 1_000_000 + " ms";
                    break;
                }
            }
            released = released.equals("not yet") ? "after 60 s, no task came" : released;
            ctx.fireChannelActive();
        }
    }

    @Test
    void anMpaClientWhoseTimeoutFiresBeforeItReadTheAnswerNamesTheServersFraming() throws Exception {
        CountDownLatch answered = new CountDownLatch(1);
        FirstOctets.minReadGraceMillis = READ_GRACE_MS;
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread server = vitcpServer(listener, answered);
            long start = System.nanoTime();
            BusyLoop busy = new BusyLoop(answered, start);
            IwarpStack stack = IwarpStack.builder().threads(1).channelHook(ch -> ch.pipeline().addLast(busy)).build();
            try (ClientWire wire = IwarpWire.client(stack)) {
                InetSocketAddress at = new InetSocketAddress("127.0.0.1", listener.getLocalPort());
                IOException e = assertThrows(IOException.class, () -> wire.connect(at, wire.allocDomain(), false, 1,
                        (wrId, receive, ok, length, status) -> { }, c -> { }, TIMEOUT_MS));
                assertEquals("the server at 127.0.0.1:" + listener.getLocalPort() + " speaks VI/TCP; use --wire vitcp",
                        e.getMessage(), "the busy loop was released " + busy.released);
            } finally {
                stack.close();
            }
            server.join(30_000);
        } finally {
            FirstOctets.minReadGraceMillis = 0;
        }
    }
}
