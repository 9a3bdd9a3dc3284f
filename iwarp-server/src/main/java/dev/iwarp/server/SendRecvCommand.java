package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code sendrecv HOST[:PORT]}: the exchange of rdma-core's {@code rdma_client} example (librdmacm):
 * post one receive, connect, then per message Send {@code --size} octets and wait for one Send back.
 * Against {@code rdma_server} (one 16-octet exchange) and against {@code serve} (which echoes any
 * Send that is not 16 octets long). Uses Sends only, so it needs no RFC 6581 IRD/ORD: the tool for
 * MPA Rev 1 peers.
 */
@Command(name = "sendrecv", mixinStandardHelpOptions = true,
        description = "Send messages and wait for one Send back for each (librdmacm rdma_client's exchange).")
final class SendRecvCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "HOST[:PORT]", description = "Peer (default port 7174; rdma_server listens on 7471).")
    String target;

    @Option(names = "--size", paramLabel = "OCTETS", description = "Octets per Send (default: ${DEFAULT-VALUE}, as rdma_client).")
    int size = 16;

    @Option(names = "--count", description = "Messages (default: ${DEFAULT-VALUE}).")
    int count = 1;

    @Option(names = "--recv-size", paramLabel = "OCTETS",
            description = "Receive buffer per message (default: ${DEFAULT-VALUE}).")
    int recvSize = 65536;

    @Option(names = "--timeout", paramLabel = "MS", description = "Per-step timeout in ms (default: ${DEFAULT-VALUE}).")
    long timeoutMs = 10_000;

    @Mixin
    ClientMpaOptions mpa = new ClientMpaOptions();

    @Override
    public Integer call() {
        if (size < 0 || count < 1 || recvSize < 1) {
            throw new IllegalArgumentException("--size must be >= 0, --count and --recv-size >= 1");
        }
        try (IwarpStack stack = IwarpStack.builder().threads(1).build()) {
            return run(stack, PingCommand.parse(target), mpa, size, count, recvSize, timeoutMs,
                    spec.commandLine().getOut()) ? 0 : 1;
        }
    }

    /** Runs the exchange; prints one line per message and a summary; true when every message was answered. */
    static boolean run(IwarpStack stack, InetSocketAddress peer, ClientMpaOptions mpa, int size, int count,
                       int recvSize, long timeoutMs, PrintWriter out) {
        ProtectionDomain pd = stack.allocPd();
        ByteBuf sendMemory = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(size, 1));
        ByteBuf recvMemory = PooledByteBufAllocator.DEFAULT.directBuffer(recvSize);
        recvMemory.writeZero(recvSize);
        for (int i = 0; i < Math.max(size, 1); i++) {
            sendMemory.writeByte('a' + i % 26);
        }
        MemoryRegion send = pd.register(sendMemory);
        MemoryRegion recv = pd.register(recvMemory, Access.LOCAL_WRITE);
        CompletionQueue sendCq = new CompletionQueue();
        CompletionQueue recvCq = new CompletionQueue();
        long t0 = System.nanoTime();
        int answered = 0;
        QueuePair qp = null;
        try {
            // librdmacm rdma_client: rdma_post_recv before rdma_connect
            qp = stack.connect(peer, ConnectOptions.of(pd).mpa(mpa.settings(1, 1)).completionQueues(sendCq, recvCq)
                    .beforeStartup(q -> q.postRecv(RecvRequest.of(0, recv.all())))).get(timeoutMs, TimeUnit.MILLISECONDS);
            out.println("connected to " + peer + ": " + IwarpWire.describe(qp.mpaParameters()));
            for (int n = 0; n < count; n++) {
                qp.postSend(SendRequest.send(n, send.slice(0, size)));
                expect(sendCq, timeoutMs, "Send " + n);
                Completion c = expect(recvCq, timeoutMs, "the peer's Send after message " + n);
                out.printf("message %d: sent %d octets, received %d octets%s%n", n, size, c.byteLength(),
                        c.byteLength() <= 32 ? ": " + ByteBufUtil.hexDump(recvMemory, 0, c.byteLength()) : "");
                answered++;
                if (n + 1 < count) {
                    qp.postRecv(RecvRequest.of(n + 1, recv.all()));
                }
            }
        } catch (ExecutionException e) {
            out.println("sendrecv failed: cannot connect to " + peer + ": " + e.getCause().getMessage());
        } catch (TimeoutException e) {
            out.println("sendrecv failed: no MPA Reply from " + peer + " within " + timeoutMs + " ms");
        } catch (IOException e) {
            out.println("sendrecv failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            out.println("sendrecv interrupted");
        } finally {
            if (qp != null) {
                qp.channel().close().awaitUninterruptibly(timeoutMs, TimeUnit.MILLISECONDS);
            }
            send.deregister();
            recv.deregister();
            sendMemory.release();
            recvMemory.release();
        }
        out.printf("%d/%d messages of %d octets answered by %s in %.1f ms%n", answered, count, size, peer,
                (System.nanoTime() - t0) / 1e6);
        return answered == count;
    }

    private static Completion expect(CompletionQueue cq, long timeoutMs, String what)
            throws IOException, InterruptedException {
        Completion c = cq.take(timeoutMs, TimeUnit.MILLISECONDS);
        if (c == null) {
            throw new IOException("no completion for " + what + " within " + timeoutMs + " ms");
        }
        if (!c.isSuccess()) {
            throw new IOException(what + " failed: " + c.status() + (c.detail() != null ? " (" + c.detail() + ")" : ""));
        }
        return c;
    }
}
