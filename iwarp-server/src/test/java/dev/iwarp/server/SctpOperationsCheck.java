package dev.iwarp.server;

import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.SctpFraming;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.sctp.SctpSettings;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import dev.iwarp.verbs.WcOpcode;
import dev.iwarp.verbs.WcStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The whole RDMA operation set over real kernel SCTP, run by {@code interop/sctp-guest.sh} in the
 * sctp-vm guest, where this machine's kernel has no SCTP: two {@link IwarpStack}s over guest loopback with the
 * native Adaptation Layer Indication; RDMA Write, RDMA Read and Send at 0, 1, MULPDU-1, MULPDU, MULPDU+1,
 * 1 MiB and 16 MiB, every octet compared; Send with Solicited Event and with Invalidate, immediate data,
 * Fetch-and-Add, Compare-and-Swap; a Write to an unknown STag answered by a Terminate with nothing placed.
 * Prints one line per check and exits 0 only when all pass. Not a JUnit test: it needs kernel SCTP.
 */
public final class SctpOperationsCheck {
    private final List<ByteBuf> buffers = new ArrayList<>();
    private int failures;

    public static void main(String[] args) throws Exception {
        System.exit(new SctpOperationsCheck().run() ? 0 : 1);
    }

    private boolean run() throws Exception {
        SctpFraming framing = SctpFraming.of(SctpSettings.builder().build());
        try (IwarpStack server = IwarpStack.builder().threads(1).build();
             IwarpStack client = IwarpStack.builder().threads(1).build()) {
            ProtectionDomain spd = server.allocPd();
            CompletionQueue serverRecv = new CompletionQueue();
            CompletableFuture<QueuePair> accepted = new CompletableFuture<>();
            Channel listener = server.listen(new InetSocketAddress("127.0.0.1", 0), framing, req -> accepted.complete(
                    req.accept(spd, new CompletionQueue(), serverRecv, new byte[0])));
            ProtectionDomain cpd = client.allocPd();
            ConnectOptions opts = ConnectOptions.of(cpd)
                    .framing(framing.bindTo(new InetSocketAddress("127.0.0.1", 0)));
            QueuePair qp = client.connect(listener.localAddress(), opts).get(30, TimeUnit.SECONDS);
            QueuePair sqp = accepted.get(30, TimeUnit.SECONDS);
            int mulpdu = qp.connectionParameters().mulpdu();
            System.out.println("connected: " + qp.connectionParameters());
            long wr = 0;
            for (int size : new int[] {0, 1, mulpdu - 1, mulpdu, mulpdu + 1, 1 << 20, 16 << 20}) {
                int n = Math.max(size, 1);
                MemoryRegion src = cpd.register(buffer(n, size), Access.LOCAL_WRITE);
                MemoryRegion target = spd.register(buffer(n, 0), Access.REMOTE_WRITE, Access.REMOTE_READ);
                MemoryRegion sink = cpd.register(buffer(n, 0), Access.LOCAL_WRITE);
                MemoryRegion recv = spd.register(buffer(n, 0), Access.LOCAL_WRITE);
                long t0 = System.nanoTime();
                // a Write completes when handed to the LLP; the Read behind it returns only after the Write was
                // placed (RFC 5040 §5.5 ordering), so both are checked once the Read completed
                qp.postSend(SendRequest.rdmaWrite(++wr, src.slice(0, size), target.stag(), target.iova()));
                qp.postSend(SendRequest.rdmaRead(++wr, sink.slice(0, size), target.stag(), target.iova()));
                boolean written = take(opts.sendCq()).isSuccess();
                boolean read = take(opts.sendCq()).isSuccess();
                check("RDMA Write of " + size + " octets", written && read
                        && equal(src.memory(), target.memory(), size), t0);
                check("RDMA Read of " + size + " octets", read && equal(src.memory(), sink.memory(), size), t0);
                t0 = System.nanoTime();
                sqp.postRecv(RecvRequest.of(size, recv.slice(0, size)));
                qp.postSend(SendRequest.send(++wr, src.slice(0, size)));
                Completion r = take(serverRecv);
                check("Send of " + size + " octets", take(opts.sendCq()).isSuccess() && r.isSuccess()
                        && r.byteLength() == size && equal(src.memory(), recv.memory(), size), t0);
                for (MemoryRegion mr : List.of(src, target, sink, recv)) {
                    mr.deregister();
                }
            }
            variants(qp, sqp, opts.sendCq(), serverRecv, cpd, spd);
            terminate(qp, opts.sendCq(), cpd, spd);
            listener.close().sync();
        } finally {
            buffers.forEach(ByteBuf::release);
        }
        System.out.println(failures == 0 ? "sctp operations: all passed" : "sctp operations: " + failures + " FAILED");
        return failures == 0;
    }

    private void variants(QueuePair qp, QueuePair sqp, CompletionQueue sendCq, CompletionQueue serverRecv,
                          ProtectionDomain cpd, ProtectionDomain spd) throws Exception {
        long t0 = System.nanoTime();
        MemoryRegion recv = spd.register(buffer(192, 0), Access.LOCAL_WRITE);
        for (int i = 0; i < 3; i++) {
            sqp.postRecv(RecvRequest.of(100 + i, recv.slice(i * 64, 64)));
        }
        MemoryRegion invalidatable = spd.register(buffer(8, 0), Access.REMOTE_WRITE, Access.REMOTE_INVALIDATE);
        MemoryRegion src = cpd.register(buffer(64, 3), Access.LOCAL_WRITE);
        qp.postSend(SendRequest.send(201, src.slice(0, 10)).solicited());
        qp.postSend(SendRequest.sendWithInvalidate(202, src.slice(0, 20), invalidatable.stag()));
        qp.postSend(SendRequest.immediateData(203, 0x1122334455667788L));
        check("Send with Solicited Event", take(serverRecv).solicited(), t0);
        check("Send with Invalidate", take(serverRecv).hasInvalidatedStag() && !invalidatable.isValid(), t0);
        Completion imm = take(serverRecv);
        check("Immediate Data (RFC 7306)", imm.opcode() == WcOpcode.RECV_IMMEDIATE
                && imm.immediateData() == 0x1122334455667788L, t0);
        for (int i = 0; i < 3; i++) {
            take(sendCq);
        }
        MemoryRegion counter = spd.register(buffer(8, 0), Access.REMOTE_ATOMIC);
        counter.memory().setLong(0, 41);
        MemoryRegion result = cpd.register(buffer(8, 0), Access.LOCAL_WRITE);
        t0 = System.nanoTime();
        qp.postSend(SendRequest.fetchAdd(204, result.all(), counter.stag(), counter.iova(), 1, 0));
        Completion f = take(sendCq);
        check("Fetch-and-Add (RFC 7306)", f.isSuccess() && f.immediateData() == 41
                && counter.memory().getLong(0) == 42, t0);
        t0 = System.nanoTime();
        qp.postSend(SendRequest.compareSwap(205, result.all(), counter.stag(), counter.iova(), 42, -1, 7, -1));
        check("Compare-and-Swap (RFC 7306)", take(sendCq).isSuccess() && counter.memory().getLong(0) == 7, t0);
    }

    private void terminate(QueuePair qp, CompletionQueue sendCq, ProtectionDomain cpd, ProtectionDomain spd)
            throws Exception {
        long t0 = System.nanoTime();
        MemoryRegion target = spd.register(buffer(64, 0), Access.REMOTE_WRITE);
        MemoryRegion src = cpd.register(buffer(64, 1), Access.LOCAL_WRITE);
        qp.postSend(SendRequest.rdmaWrite(301, src.all(), target.stag() ^ 0x100, target.iova()));
        boolean sent = take(sendCq).isSuccess();
        for (int i = 0; i < 600 && qp.peerTerminate() == null; i++) {
            Thread.sleep(50);
        }
        boolean terminated = qp.peerTerminate() != null
                && qp.peerTerminate().cause().equals(new TerminateCause(1, 1, 0x00));
        check("Write to an unknown STag: Terminate 1/1/0x00, nothing placed", sent && terminated
                && equal(buffer(64, 0), target.memory(), 64), t0);
    }

    private void check(String what, boolean ok, long startNanos) {
        System.out.printf("%s %s (%d ms)%n", ok ? "OK  " : "FAIL", what,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
        if (!ok) {
            failures++;
        }
    }

    private static Completion take(CompletionQueue cq) throws InterruptedException {
        Completion c = cq.take(120, TimeUnit.SECONDS);
        if (c == null) {
            throw new IllegalStateException("no completion within 120 s");
        }
        if (!c.isSuccess() && c.status() != WcStatus.SUCCESS) {
            System.out.println("     completion: " + c);
        }
        return c;
    }

    private ByteBuf buffer(int size, int seed) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        byte[] content = new byte[size];
        for (int i = 0; i < size; i++) {
            content[i] = (byte) (i * 7 + seed);
        }
        b.writeBytes(content);
        buffers.add(b);
        return b;
    }

    private static boolean equal(ByteBuf a, ByteBuf b, int length) {
        byte[] x = new byte[length];
        byte[] y = new byte[length];
        a.getBytes(0, x);
        b.getBytes(0, y);
        return Arrays.equals(x, y);
    }
}
