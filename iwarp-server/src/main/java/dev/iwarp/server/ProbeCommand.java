package dev.iwarp.server;

import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.bootstrap.ConnectOptions;
import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.WireFraming;
import dev.iwarp.mpa.MpaRejectedException;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.rdmap.TerminateMessage;
import dev.iwarp.verbs.Access;
import dev.iwarp.verbs.CompletionQueue;
import dev.iwarp.verbs.MemoryRegion;
import dev.iwarp.verbs.ProtectionDomain;
import dev.iwarp.verbs.QueuePair;
import dev.iwarp.verbs.RecvRequest;
import dev.iwarp.verbs.SendRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code probe HOST[:PORT] --case CASE}: connects as MPA Initiator, commits one deliberate protocol
 * violation and reports how the peer reacted, against the error the RFCs name for it. For testing
 * iWARP equipment (and our own {@code serve}); each case needs nothing from the peer but a listener.
 * Over IFT ({@code --wire ift}) the DDP and RDMAP cases run unchanged; {@code markers} is MPA's and refused.
 *
 * <p>Exit code: 0 when the peer reacted as the RFC says, 3 when it reacted with a different error
 * (printed with what the RFC names), 1 when it did not react (no Terminate, no reject, within the
 * timeout), 2 for bad options.
 */
@Command(name = "probe",
        description = "Commit one deliberate protocol violation and report the peer's reaction against the RFC.")
final class ProbeCommand implements Callable<Integer> {
    static final int EXIT_AS_RFC = 0;
    static final int EXIT_NO_REACTION = 1;
    static final int EXIT_OTHER_ERROR = 3;

    /** An STag no peer has advertised to us; its key octet is 0 like a fresh siw STag (siw_mem.c). */
    static final int UNADVERTISED_STAG = 0x00dead00;

    /** The violations, each with the error the RFCs name for it. */
    enum Case {
        /** RFC 5041 §7.2 (DDP tagged buffer error, Invalid STag): 1/1/0x00. */
        WRITE_INVALID_STAG("write-invalid-stag", new TerminateCause(1, 1, 0x00),
                "RDMA Write to unadvertised STag 0x00dead00"),
        /** RFC 5040 §7.2 (RDMAP remote protection error, Invalid STag): 0/1/0x00. */
        READ_INVALID_STAG("read-invalid-stag", new TerminateCause(0, 1, 0x00),
                "RDMA Read Request from unadvertised STag 0x00dead00"),
        /** RFC 5041 §7.2 (DDP untagged buffer error, message too long for the buffer): 1/2/0x05. */
        SEND_TOO_LONG("send-too-long", new TerminateCause(1, 2, 0x05),
                "Send longer than any receive the peer posted (--size)"),
        /** RFC 5044 §7.1.2: a sender MUST insert markers when the peer's frame has M=1. */
        MARKERS("markers", null, "MPA Request with M=1 (the Responder must send markers to us)");

        final String label;
        final TerminateCause rfcCause;
        final String what;

        Case(String label, TerminateCause rfcCause, String what) {
            this.label = label;
            this.rfcCause = rfcCause;
            this.what = what;
        }

        @Override
        public String toString() {
            return label;
        }

        static Case parse(String s) {
            for (Case c : values()) {
                if (c.label.equals(s)) {
                    return c;
                }
            }
            throw new IllegalArgumentException("--case must be one of write-invalid-stag, read-invalid-stag, "
                    + "send-too-long, markers: " + s);
        }
    }

    @Spec
    CommandSpec spec;

    @Mixin
    HelpOption help;

    @Mixin
    ToolLogging log = new ToolLogging();

    @Parameters(paramLabel = "HOST[:PORT]", description = "Peer (default port 7174, --wire ift 7176).")
    String target;

    @Option(names = "--case", required = true, paramLabel = "CASE", converter = CaseConverter.class,
            description = "write-invalid-stag, read-invalid-stag, send-too-long or markers.")
    Case probeCase;

    @Option(names = "--size", paramLabel = "OCTETS", description = "Octets of the Write, Read or Send (default: 16; "
            + "send-too-long: " + (RpingSession.BUFFER_SIZE + 1) + ", one more than serve's receives).")
    @Range(min = 1)
    Integer size;

    @Option(names = "--timeout", paramLabel = "MS", description = "How long to wait for the peer (default: ${DEFAULT-VALUE}).")
    @Range(min = 1)
    long timeoutMs = 10_000;

    @Mixin
    ClientMpaOptions mpa = new ClientMpaOptions();

    @Mixin
    WireOptions wire = new WireOptions();

    static final class CaseConverter implements picocli.CommandLine.ITypeConverter<Case> {
        @Override
        public Case convert(String value) {
            try {
                return Case.parse(value);
            } catch (IllegalArgumentException e) { // picocli prints this message alone, without the exception's class
                throw new picocli.CommandLine.TypeConversionException("expected one of [write-invalid-stag, "
                        + "read-invalid-stag, send-too-long, markers] but was '" + value + "'");
            }
        }
    }

    @Override
    public Integer call() {
        int octets = size != null ? size : probeCase == Case.SEND_TOO_LONG ? RpingSession.BUFFER_SIZE + 1 : 16;
        wire.check();
        Framing framing = wire.tool().probeFraming(mpa, probeCase == Case.MARKERS, timeoutMs);
        InetSocketAddress peer = PingCommand.parse(target, wire.defaultPort());
        try (IwarpStack stack = IwarpStack.builder().threads(1).build()) {
            return run(stack, peer, probeCase, framing, octets, timeoutMs,
                    spec.commandLine().getOut());
        }
    }

    /** Runs one case over MPA and prints what happened; returns the exit code. */
    static int run(IwarpStack stack, InetSocketAddress peer, Case c, ClientMpaOptions mpa, int size, long timeoutMs,
                   PrintWriter out) {
        return run(stack, peer, c, MpaFraming.of(mpa.settings(1, 1)), size, timeoutMs, out);
    }

    /** Runs one case over {@code framing} (MPA or IFT) and prints what happened; returns the exit code. */
    static int run(IwarpStack stack, InetSocketAddress peer, Case c, Framing framing, int size, long timeoutMs,
                   PrintWriter out) {
        return run(stack, peer, c, framing, size, timeoutMs, timeoutMs, out);
    }

    /**
     * As above, waiting up to {@code connectTimeoutMs} for the connection's startup and {@code timeoutMs} for the
     * peer's reaction to the violation (a caller that wants a short reaction window need not shorten the startup).
     */
    static int run(IwarpStack stack, InetSocketAddress peer, Case c, Framing framing, int size, long connectTimeoutMs,
                   long timeoutMs, PrintWriter out) {
        out.printf("probe %s against %s: %s (%d octets)%n", c, dev.iwarp.server.wire.Addresses.format(peer), c.what, size);
        ProtectionDomain pd = stack.allocPd();
        ByteBuf memory = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(size, 16));
        memory.writeZero(memory.capacity());
        MemoryRegion mr = pd.register(memory, Access.LOCAL_WRITE);
        CompletionQueue sendCq = new CompletionQueue();
        CompletionQueue recvCq = new CompletionQueue();
        try {
            QueuePair qp;
            // what the server answered: a server of another framing is named rather than this framing's startup error
            WireFraming kind = WireFraming.of(framing);
            dev.iwarp.server.wire.FirstOctets.Watch watch = new dev.iwarp.server.wire.FirstOctets.Watch(
                    kind.peerFraming());
            try {
                qp = stack.connect(peer, ConnectOptions.of(pd).channelHook(watch::install).framing(framing)
                        .completionQueues(sendCq, recvCq)
                        // a receive, so a Terminate also shows as a flushed receive
                        .beforeStartup(q -> q.postRecv(RecvRequest.of(1, mr.slice(0, 16)))))
                        .get(connectTimeoutMs, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                String other = watch.mismatch(peer);
                return other != null ? otherFraming(other, out) : connectFailed(c, e.getCause(), out);
            } catch (TimeoutException e) {
                String other = watch.mismatchOnceRead(peer, Math.min(connectTimeoutMs, 2_000));
                if (other != null) {
                    return otherFraming(other, out);
                }
                out.printf("result: FAIL: no %s within %d ms%n", kind.startupAnswer(), connectTimeoutMs);
                return EXIT_NO_REACTION;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                out.println("result: FAIL: interrupted");
                return EXIT_NO_REACTION;
            }
            out.println("connected: " + IwarpWire.describe(qp.connectionParameters()));
            if (c == Case.MARKERS) {
                return markersAccepted(qp, out);
            }
            switch (c) {
                case WRITE_INVALID_STAG:
                    qp.postSend(SendRequest.rdmaWrite(2, mr.slice(0, size), UNADVERTISED_STAG, 0));
                    break;
                case READ_INVALID_STAG:
                    qp.postSend(SendRequest.rdmaRead(2, mr.slice(0, size), UNADVERTISED_STAG, 0));
                    break;
                case SEND_TOO_LONG:
                    qp.postSend(SendRequest.send(2, mr.slice(0, size)));
                    break;
                default:
                    throw new IllegalStateException(c.label);
            }
            boolean closed = qp.channel().closeFuture().awaitUninterruptibly(timeoutMs, TimeUnit.MILLISECONDS);
            TerminateMessage t = qp.peerTerminate();
            if (t == null) {
                out.printf("result: FAIL: %s%n", closed ? "the peer closed the connection without a Terminate"
                        : "no Terminate and no close within " + timeoutMs + " ms");
                qp.channel().close().awaitUninterruptibly(timeoutMs, TimeUnit.MILLISECONDS);
                return EXIT_NO_REACTION;
            }
            TerminateCause got = t.interpreted().cause();
            out.println("peer's " + t.describe());
            String layout = t.siwByteOrderSuspected() ? " (control word in siw's bit order)" : "";
            if (got.equals(c.rfcCause)) {
                out.printf("result: AS-RFC: Terminate %s%s%n", code(got), layout);
                return EXIT_AS_RFC;
            }
            out.printf("result: OTHER: Terminate %s%s; the RFC names %s (%s)%n", code(got), layout, code(c.rfcCause),
                    c.rfcCause.describe());
            return EXIT_OTHER_ERROR;
        } finally {
            mr.deregister();
            memory.release();
        }
    }

    private static int connectFailed(Case c, Throwable cause, PrintWriter out) {
        if (c == Case.MARKERS && cause instanceof MpaRejectedException) {
            out.println("peer rejected the MPA Request: " + cause.getMessage());
            out.println("result: OTHER: MPA Reply with R=1; RFC 5044 §7.1.2 has the Responder send markers when asked");
            return EXIT_OTHER_ERROR;
        }
        out.println("result: FAIL: cannot connect: " + dev.iwarp.server.wire.Addresses.reason(cause));
        return EXIT_NO_REACTION;
    }

    /** The server speaks another framing: nothing was probed, and the user is told which --wire to use. */
    private static int otherFraming(String mismatch, PrintWriter out) {
        out.println("result: FAIL: " + mismatch);
        return EXIT_NO_REACTION;
    }

    private static int markersAccepted(QueuePair qp, PrintWriter out) {
        boolean ok = qp.connectionParameters().framing(MpaParameters.class).markersRx();
        qp.channel().close().awaitUninterruptibly();
        if (ok) {
            out.println("result: AS-RFC: the peer accepted M=1 and inserts markers toward us");
            return EXIT_AS_RFC;
        }
        out.println("result: OTHER: the peer accepted but will not send markers (RFC 5044 §7.1.2 says it must)");
        return EXIT_OTHER_ERROR;
    }

    private static String code(TerminateCause c) {
        return String.format("%d/%d/0x%02x", c.layer(), c.errorType(), c.errorCode());
    }
}
