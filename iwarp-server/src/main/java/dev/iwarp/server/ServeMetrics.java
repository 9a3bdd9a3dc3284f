package dev.iwarp.server;

import dev.iwarp.rdmap.RdmapOpcode;
import dev.iwarp.rdmap.TerminateCause;
import dev.iwarp.verbs.RdmaObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.jmx.JmxConfig;
import io.micrometer.jmx.JmxMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.channel.Channel;

import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * {@code serve}'s metrics through Micrometer: the RDMA traffic and Terminates every connection's engine reports
 * ({@link RdmaObserver}), the server's connection counts, JVM memory, threads and CPU. One registry feeds the
 * Prometheus text format ({@link #scrape}) and, unless asked not to, JMX (domain {@code metrics}).
 *
 * <p>Meters: {@code iwarp.messages} and {@code iwarp.payload.bytes} per {@code op} (RDMAP opcode) and
 * {@code direction} (in, out); {@code iwarp.terminates} per {@code direction} (sent, withheld, received),
 * {@code layer}, {@code etype}, {@code code}; {@code iwarp.crc.errors} (MPA/IFT CRC errors, Terminate
 * 2/0/0x02) and {@code iwarp.placement.errors} (DDP tagged or untagged buffer errors, Terminates of layer 1,
 * RFC 5041 §7) per {@code detected_by} (us: we sent the Terminate; peer: we received it);
 * {@code iwarp.connections.accepted}, {@code iwarp.connections.refused} per {@code cause} ({@link RefusalCause}: the
 * option whose limit refused or closed it), {@code iwarp.connections.open}, {@code iwarp.connections.startup} (in
 * startup now); the queue depths summed over connections ({@link QueueDepths}): {@code iwarp.queue.send.requests},
 * {@code iwarp.queue.ird.used}, {@code iwarp.queue.ord.used}, {@code iwarp.queue.outbound.bytes} per {@code stage}
 * (engine, channel); {@code iwarp.eventloop.busy} seconds per {@code loop} ({@link EventLoopBusyTime}, for a stack
 * built with {@link #eventLoops()}); {@code iwarp.peer.memory.committed} once {@link #peerMemoryCommitted} is set.
 */
final class ServeMetrics implements RdmaObserver, AutoCloseable {
    private static final RdmapOpcode[] OPCODES = RdmapOpcode.values();

    private final PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JmxMeterRegistry jmx;
    private final CompositeMeterRegistry registry = new CompositeMeterRegistry();
    /** [direction 0 in, 1 out][opcode ordinal]: looked up without a map on the event loops. */
    private final Counter[][] messages = new Counter[2][OPCODES.length];
    private final Counter[][] bytes = new Counter[2][OPCODES.length];
    /** Streams the memory budget ended ({@code cause=memory-budget}). */
    private final java.util.concurrent.atomic.AtomicLong memoryRefused = new java.util.concurrent.atomic.AtomicLong();
    private final EventLoopBusyTime eventLoops = new EventLoopBusyTime(this::busyTime);

    ServeMetrics(boolean withJmx) {
        registry.add(prometheus);
        jmx = withJmx ? new JmxMeterRegistry(JmxConfig.DEFAULT, io.micrometer.core.instrument.Clock.SYSTEM) : null;
        if (jmx != null) {
            registry.add(jmx);
        }
        for (int d = 0; d < 2; d++) {
            for (RdmapOpcode op : OPCODES) {
                String name = op.name().toLowerCase(Locale.ROOT);
                String dir = d == 0 ? "in" : "out";
                messages[d][op.ordinal()] = Counter.builder("iwarp.messages").tag("op", name).tag("direction", dir)
                        .description("RDMAP messages (inbound: counted at their last DDP segment)").register(registry);
                bytes[d][op.ordinal()] = Counter.builder("iwarp.payload.bytes").tag("op", name).tag("direction", dir)
                        .baseUnit("bytes").description("DDP payload octets").register(registry);
            }
        }
        for (String by : new String[] {"us", "peer"}) {
            Counter.builder("iwarp.crc.errors").tag("detected_by", by)
                    .description("MPA or IFT CRC errors (Terminate LLP 2/0/0x02)").register(registry);
            Counter.builder("iwarp.placement.errors").tag("detected_by", by)
                    .description("DDP tagged or untagged buffer errors (Terminate layer 1)").register(registry);
        }
        FunctionCounter.builder("iwarp.connections.refused", memoryRefused, java.util.concurrent.atomic.AtomicLong::get)
                .tag("cause", RefusalCause.MEMORY_BUDGET.option()).description(REFUSED).register(registry);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
    }

    MeterRegistry registry() {
        return registry;
    }

    private static final String REFUSED = "connections refused at once, or closed, because the limit of the option "
            + "named by cause ran out";

    /** Wraps a stack's I/O handlers to measure each event loop's busy time ({@code IwarpStack.Builder}). */
    java.util.function.UnaryOperator<io.netty.channel.IoHandlerFactory> eventLoops() {
        return eventLoops;
    }

    private void busyTime(EventLoopBusyTime.Loop loop) {
        FunctionCounter.builder("iwarp.eventloop.busy", loop, l -> l.busyNanos() / 1e9).baseUnit("seconds")
                .tag("loop", Integer.toString(loop.index()))
                .description("time the event loop spent processing I/O and running tasks (not waiting for I/O)")
                .register(registry);
    }

    /** The connection counts and queue depths of {@code server}. */
    void bind(RpingServer server) {
        FunctionCounter.builder("iwarp.connections.accepted", server, RpingServer::accepted)
                .description("connections accepted into a session").register(registry);
        for (RefusalCause c : RefusalCause.values()) {
            if (c != RefusalCause.MEMORY_BUDGET) { // counted here, from the engines
                FunctionCounter.builder("iwarp.connections.refused", server, s -> s.refused(c))
                        .tag("cause", c.option()).description(REFUSED).register(registry);
            }
        }
        Gauge.builder("iwarp.connections.open", server, s -> s.sessions().size())
                .description("sessions open").register(registry);
        Gauge.builder("iwarp.connections.startup", server, RpingServer::inStartup)
                .description("connections accepted by TCP and still in startup (--max-startups counts them)")
                .register(registry);
        QueueDepths q = new QueueDepths(() -> server.sessions().stream().map(RpingSession::connection)
                .filter(java.util.Objects::nonNull).map(dev.iwarp.server.wire.WireConnection::channel).toList());
        Gauge.builder("iwarp.queue.send.requests", q, d -> d.totals().sendRequests()).strongReference(true)
                .description("send-queue requests posted and not completed, over all connections").register(registry);
        Gauge.builder("iwarp.queue.ird.used", q, d -> d.totals().ird()).strongReference(true)
                .description("IRD slots in use: inbound RDMA Read Requests whose response has not left")
                .register(registry);
        Gauge.builder("iwarp.queue.ord.used", q, d -> d.totals().ord()).strongReference(true)
                .description("ORD slots in use: RDMA Read Requests we sent whose response has not arrived")
                .register(registry);
        Gauge.builder("iwarp.queue.outbound.bytes", q, d -> d.totals().engineOctets()).tag("stage", "engine")
                .baseUnit("bytes").strongReference(true)
                .description("octets queued to send: payload the RDMA engines hold back (engine), octets written "
                        + "that the sockets have not taken (channel)").register(registry);
        Gauge.builder("iwarp.queue.outbound.bytes", q, d -> d.totals().channelOctets()).tag("stage", "channel")
                .baseUnit("bytes").strongReference(true)
                .description("octets queued to send: payload the RDMA engines hold back (engine), octets written "
                        + "that the sockets have not taken (channel)").register(registry);
    }

    /** Memory committed on peers' behalf (registered regions' backing, queued responses), in bytes. */
    void peerMemoryCommitted(LongSupplier committed) {
        // held strongly: a gauge keeps only a weak reference to its state, and a lambda has no other holder
        Gauge.builder("iwarp.peer.memory.committed", committed, s -> s.getAsLong()).baseUnit("bytes")
                .strongReference(true).description("memory committed on peers' behalf").register(registry);
    }

    /** The budget peers' commitments draw from: what is committed, its limit, and the reservations it refused. */
    void peerMemoryBudget(dev.iwarp.verbs.MemoryBudget budget) {
        peerMemoryCommitted(budget::committed);
        Gauge.builder("iwarp.peer.memory.budget", budget, dev.iwarp.verbs.MemoryBudget::limit).baseUnit("bytes")
                .description("--memory-budget: the most serve commits on peers' behalf").register(registry);
        FunctionCounter.builder("iwarp.peer.memory.refused", budget, dev.iwarp.verbs.MemoryBudget::refusals)
                .description("reservations refused because the memory budget was short").register(registry);
    }

    /** The Prometheus text exposition format of every meter. */
    String scrape() {
        return prometheus.scrape();
    }

    @Override
    public void transferred(Channel ch, boolean inbound, RdmapOpcode op, int payloadOctets, boolean messageEnds) {
        if (op == null) {
            return;
        }
        int d = inbound ? 0 : 1;
        bytes[d][op.ordinal()].increment(payloadOctets);
        if (messageEnds) {
            messages[d][op.ordinal()].increment();
        }
    }

    @Override
    public void terminate(Channel ch, TerminateDirection direction, TerminateCause c) {
        Counter.builder("iwarp.terminates").tag("direction", direction.name().toLowerCase(Locale.ROOT))
                .tag("layer", Integer.toString(c.layer())).tag("etype", Integer.toString(c.errorType()))
                .tag("code", String.format("0x%02x", c.errorCode()))
                .description("Terminates (RFC 5040 §4.7)").register(registry).increment();
        String by = direction == TerminateDirection.RECEIVED ? "peer" : "us";
        if (c.layer() == TerminateCause.LAYER_LLP && c.errorType() == TerminateCause.ETYPE_MPA && c.errorCode() == 0x02) {
            registry.counter("iwarp.crc.errors", "detected_by", by).increment();
        }
        if (c.layer() == TerminateCause.LAYER_DDP && (c.errorType() == 1 || c.errorType() == 2)) {
            registry.counter("iwarp.placement.errors", "detected_by", by).increment();
        }
    }

    @Override
    public void memoryRefused(Channel ch) {
        memoryRefused.incrementAndGet();
    }

    @Override
    public void close() {
        registry.close();
        prometheus.close();
        if (jmx != null) {
            jmx.close();
        }
    }
}
