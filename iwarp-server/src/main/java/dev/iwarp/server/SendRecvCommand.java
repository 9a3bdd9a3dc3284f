package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.BlockingCompletions;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.WireAccess;
import dev.iwarp.server.wire.WireConnection;
import dev.iwarp.server.wire.WireDomain;
import dev.iwarp.server.wire.WireRegion;
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

/**
 * {@code sendrecv HOST[:PORT]}: the exchange of rdma-core's {@code rdma_client} example (librdmacm):
 * post one receive, connect, then per message Send {@code --size} octets and wait for one Send back.
 * Against {@code rdma_server} (one 16-octet exchange) and against {@code serve} (which echoes any
 * Send that is not an rping advertisement: 16 zero octets, as rdma_client sends them, advertise nothing). Uses Sends only, so it needs
 * no RFC 6581 IRD/ORD: the tool for MPA Rev 1 peers. Over iWARP or VI/TCP.
 */
@Command(name = "sendrecv",
        description = "Send messages and wait for one Send back for each (librdmacm rdma_client's exchange).")
final class SendRecvCommand implements Callable<Integer> {
    private static final long WR_SEND = 1;

    @Spec
    CommandSpec spec;

    @Mixin
    HelpOption help;

    @Mixin
    ToolLogging log = new ToolLogging();

    @Parameters(paramLabel = "HOST[:PORT]",
            description = "Peer (default port 7174, --wire vitcp 7175, --wire ift 7176; rdma_server listens on 7471).")
    String target;

    @Mixin
    WireOptions wire = new WireOptions();

    @Option(names = "--size", paramLabel = "OCTETS", description = "Octets per Send (default: ${DEFAULT-VALUE}, as rdma_client).")
    @Range
    int size = 16;

    @Option(names = "--count", description = "Messages (default: ${DEFAULT-VALUE}).")
    @Range(min = 1)
    int count = 1;

    @Option(names = "--recv-size", paramLabel = "OCTETS",
            description = "Receive buffer per message (default: ${DEFAULT-VALUE}).")
    @Range(min = 1)
    int recvSize = 65536;

    @Option(names = "--timeout", paramLabel = "MS", description = "Per-step timeout in ms (default: ${DEFAULT-VALUE}).")
    @Range(min = 1)
    long timeoutMs = 10_000;

    @Mixin
    ClientMpaOptions mpa = new ClientMpaOptions();

    @Override
    public Integer call() {
        InetSocketAddress peer = PingCommand.parse(target, wire.defaultPort());
        try (IwarpStack stack = wire.tool().stack(IwarpStack.builder().threads(1));
             ClientWire client = wire.clientWire(stack, mpa)) {
            return run(client, peer, mpa.crc, size, count, recvSize,
                    timeoutMs, spec.commandLine().getOut()) ? 0 : 1;
        }
    }

    /**
     * Says why the exchange failed when the peer ended the connection: its Terminate or a plain close, and, for a
     * 16-octet Send, that {@code serve} reads those as rping buffer advertisements unless run with {@code --echo}.
     */
    private static void explain(WireConnection conn, int size, long timeoutMs, PrintWriter out) {
        conn.channel().closeFuture().awaitUninterruptibly(Math.min(timeoutMs, 1000));
        String error = conn.peerError();
        if (error == null && conn.channel().isActive()) {
            return; // a timeout of ours, not the peer's doing
        }
        out.println("the peer " + (error != null ? "sent " + error : "closed the connection without an error message"));
    }

    /** Runs the exchange; prints one line per message and a summary; true when every message was answered. */
    static boolean run(ClientWire client, InetSocketAddress peer, boolean crc, int size, int count, int recvSize,
                       long timeoutMs, PrintWriter out) {
        return run(client, peer, crc, size, count, recvSize, timeoutMs, out, false);
    }

    /** As above; {@code letters}: the messages are 'a'..'z' repeated instead of zeros. */
    static boolean run(ClientWire client, InetSocketAddress peer, boolean crc, int size, int count, int recvSize,
                       long timeoutMs, PrintWriter out, boolean letters) {
        WireDomain domain = client.allocDomain();
        ByteBuf sendMemory = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(size, 1));
        ByteBuf recvMemory = PooledByteBufAllocator.DEFAULT.directBuffer(recvSize);
        recvMemory.writeZero(recvSize);
        for (int i = 0; i < sendMemory.capacity(); i++) { // zeros as rdma_client's send_msg, a zeroed static buffer
            sendMemory.writeByte(letters ? 'a' + i % 26 : 0);
        }
        WireRegion send = domain.register(sendMemory);
        WireRegion recv = domain.register(recvMemory, WireAccess.LOCAL_WRITE);
        BlockingCompletions completions = new BlockingCompletions();
        long t0 = System.nanoTime();
        int answered = 0;
        WireConnection conn = null;
        try {
            // librdmacm rdma_client: rdma_post_recv before rdma_connect
            conn = client.connect(peer, domain, crc, 1, completions, c -> c.postRecv(0, recv, 0, recvSize), timeoutMs);
            out.println("connected to " + dev.iwarp.server.wire.Addresses.format(peer) + ": " + conn.parameters());
            for (int n = 0; n < count; n++) {
                conn.postSend(WR_SEND, send, 0, size);
                completions.take(false, timeoutMs, "Send " + n);
                int got = completions.take(true, timeoutMs, "the peer's Send after message " + n).byteLength();
                out.printf("message %d: sent %d octets, received %d octets%s%n", n, size, got,
                        got <= 32 ? ": " + ByteBufUtil.hexDump(recvMemory, 0, got) : "");
                answered++;
                if (n + 1 < count) {
                    conn.postRecv(0, recv, 0, recvSize);
                }
            }
        } catch (IOException e) {
            out.println("sendrecv failed: " + e.getMessage());
            if (conn != null) {
                explain(conn, size, timeoutMs, out);
            }
        } finally {
            if (conn != null) {
                conn.channel().close().awaitUninterruptibly(timeoutMs);
            }
            send.deregister();
            recv.deregister();
            sendMemory.release();
            recvMemory.release();
        }
        out.printf("%d/%d messages of %d octets answered by %s in %.1f ms%n", answered, count, size, dev.iwarp.server.wire.Addresses.format(peer),
                (System.nanoTime() - t0) / 1e6);
        return answered == count;
    }
}
