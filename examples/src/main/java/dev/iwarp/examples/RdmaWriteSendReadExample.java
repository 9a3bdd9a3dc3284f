package dev.iwarp.examples;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Two parties over the verbs API on loopback, the way an RDMA program is usually written:
 * <ol>
 *   <li>the server registers a target region and advertises it in its MPA Reply's Private Data
 *       (8-octet TO, 4-octet STag, 4-octet length, big-endian), and posts a receive as it accepts;</li>
 *   <li>the client reads the advertisement from {@code qp.connectionParameters().peerPrivateData()},
 *       RDMA Writes a message into the region, then Sends a note saying where it landed (RFC 5040
 *       §5.5: the Send is delivered after the Write before it is placed);</li>
 *   <li>the server, on the Send's receive completion, finds the message in its region;</li>
 *   <li>the client RDMA Reads the server's greeting from the second half of the region;</li>
 *   <li>both close cleanly: the client's graceful close, the server seeing the TCP close.</li>
 * </ol>
 * Run it with {@code java -cp ... dev.iwarp.examples.RdmaWriteSendReadExample}.
 */
public final class RdmaWriteSendReadExample {
    /** Octets of the server's target region: the first half is written, the second half read. */
    static final int REGION = 4096;
    /** Where the server's greeting sits in its region. */
    static final int GREETING_OFFSET = REGION / 2;
    static final String GREETING = "hello from the server's memory";

    /** What each side saw, for the caller (and the test) to check. */
    public record Outcome(String serverFoundInRegion, String noteReceived, String clientReadBack) {
    }

    private RdmaWriteSendReadExample() {
    }

    /**
     * Runs the example and prints what happens.
     *
     * @param args ignored
     * @throws Exception if any step fails
     */
    public static void main(String[] args) throws Exception {
        run("hello from the client, placed by RDMA Write", System.out);
    }

    /**
     * Runs both parties in this JVM, the client writing {@code message}; prints each step to {@code out}.
     *
     * @param message what the client RDMA Writes into the server's region (at most half of it)
     * @param out     where the steps are printed
     * @return what the server found in its region, the note it received, and what the client read back
     * @throws Exception if a step fails or takes longer than ten seconds
     */
    public static Outcome run(String message, PrintStream out) throws Exception {
        byte[] payload = message.getBytes(StandardCharsets.UTF_8);
        if (payload.length > GREETING_OFFSET) {
            throw new IllegalArgumentException("message longer than " + GREETING_OFFSET + " octets");
        }
        ByteBuf serverMemory = Unpooled.directBuffer(REGION, REGION).writeZero(REGION);
        ByteBuf serverRecvMemory = Unpooled.directBuffer(256, 256).writeZero(256);
        ByteBuf clientMemory = Unpooled.directBuffer(REGION, REGION).writeZero(REGION);
        serverMemory.setCharSequence(GREETING_OFFSET, GREETING, StandardCharsets.US_ASCII);
        clientMemory.setBytes(0, payload);
        try (IwarpStack serverStack = IwarpStack.builder().threads(1).build();
             IwarpStack clientStack = IwarpStack.builder().threads(1).build()) {
            // --- server: a target region, advertised in the MPA Reply; a receive posted at accept
            ProtectionDomain spd = serverStack.allocPd();
            MemoryRegion target = spd.register(serverMemory, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
            MemoryRegion serverRecv = spd.register(serverRecvMemory, Access.LOCAL_WRITE);
            CompletionQueue serverRecvCq = new CompletionQueue();
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            byte[] advertisement = ByteBuffer.allocate(16).putLong(target.iova()).putInt(target.stag())
                    .putInt(target.length()).array();
            Channel listener = serverStack.listen(new InetSocketAddress("127.0.0.1", 0), MpaSettings.defaults(), req -> {
                QueuePair qp = req.accept(spd, new CompletionQueue(), serverRecvCq, advertisement);
                qp.postRecv(RecvRequest.of(1, serverRecv.all())); // before the client's first Send can arrive
                accepted.complete(qp);
            });
            InetSocketAddress where = (InetSocketAddress) listener.localAddress(); // written 127.0.0.1:PORT, not /127...
            out.printf("server: listening on %s:%d, region STag 0x%08x TO 0x%016x%n", where.getHostString(), where.getPort(),
                    target.stag(), target.iova());

            // --- client: connect with ORD 1 (it will RDMA Read), read the advertisement
            ProtectionDomain cpd = clientStack.allocPd();
            MemoryRegion local = cpd.register(clientMemory, Access.LOCAL_WRITE);
            ConnectOptions opts = ConnectOptions.of(cpd).mpa(MpaSettings.builder().ird(1).ord(1).build());
            QueuePair qp = clientStack.connect(listener.localAddress(), opts).get(10, TimeUnit.SECONDS);
            ByteBuffer ad = ByteBuffer.wrap(qp.connectionParameters().peerPrivateData());
            long to = ad.getLong();
            int stag = ad.getInt();
            int length = ad.getInt();
            out.printf("client: connected; the server's region is STag 0x%08x TO 0x%016x, %d octets%n", stag, to, length);

            // RDMA Write, then the Send that tells the server it landed
            qp.postSend(SendRequest.rdmaWrite(10, local.slice(0, payload.length), stag, to));
            byte[] note = ("wrote " + payload.length + " octets at TO 0x" + Long.toHexString(to))
                    .getBytes(StandardCharsets.US_ASCII);
            clientMemory.setBytes(GREETING_OFFSET, note);
            qp.postSend(SendRequest.send(11, local.slice(GREETING_OFFSET, note.length)));
            expect(opts.sendCq(), 10, "RDMA Write");
            expect(opts.sendCq(), 11, "Send");

            // --- server: the Send arrives after the Write is placed
            Completion received = expect(serverRecvCq, 1, "the server's receive");
            String noteReceived = serverRecvMemory.toString(0, received.byteLength(), StandardCharsets.US_ASCII);
            String found = serverMemory.toString(0, payload.length, StandardCharsets.UTF_8);
            out.printf("server: received \"%s\"; the region holds \"%s\"%n", noteReceived, found);

            // --- client: RDMA Read the server's greeting into its own memory
            int n = GREETING.length();
            qp.postSend(SendRequest.rdmaRead(12, local.slice(REGION - n, n), stag, to + GREETING_OFFSET));
            expect(opts.sendCq(), 12, "RDMA Read");
            String readBack = clientMemory.toString(REGION - n, n, StandardCharsets.US_ASCII);
            out.printf("client: RDMA Read \"%s\"%n", readBack);

            // --- clean shutdown: the client closes gracefully, the server sees the connection end
            qp.close().get(10, TimeUnit.SECONDS);
            accepted.get(10, TimeUnit.SECONDS).channel().closeFuture().await(10, TimeUnit.SECONDS);
            listener.close().sync();
            out.println("both: closed");
            local.deregister();
            target.deregister();
            serverRecv.deregister();
            return new Outcome(found, noteReceived, readBack);
        } finally {
            serverMemory.release();
            serverRecvMemory.release();
            clientMemory.release();
        }
    }

    private static Completion expect(CompletionQueue cq, long wrId, String what) throws Exception {
        Completion c = cq.take(10, TimeUnit.SECONDS);
        if (c == null) {
            throw new IOException(what + ": no completion within 10 s");
        }
        if (!c.isSuccess() || c.wrId() != wrId) {
            throw new IOException(what + ": completed " + c.status() + " (work request " + c.wrId() + ")");
        }
        return c;
    }
}
