package dev.iwarp.bootstrap;

import dev.iwarp.sctp.SctpSettings;
import dev.iwarp.sctp.SctpShim;
import io.netty.channel.ChannelPipeline;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The SCTP DDP/RDMA adaptation (draft-stewart-otis-sctp-ddp-rdma-00) as the framing of an iWARP
 * stream: the shim's handlers ({@link SctpShim}) and the adapter to DDP's lower-layer contract named
 * {@link IwarpPipeline#LLP}. One SCTP message carries the 20-octet RDMA extension and one whole DDP
 * segment; MULPDU is the maximum chunk user data minus 20 (default 1412).
 *
 * <p>The indications negotiate no IRD and ORD: they are configuration, the same on both sides by
 * default (16 and 16, as MPA's defaults). Needs an SCTP channel ({@code ShimSctpChannel} over real
 * SCTP; any channel carrying {@code SctpMessage}s in tests). Immutable.
 */
public final class SctpFraming implements Framing {
    /** Default IRD and ORD (the ULP's out-of-band agreement; MPA's defaults). */
    public static final int DEFAULT_DEPTH = 16;

    private final SctpSettings settings;
    private final int ird;
    private final int ord;
    private final InetSocketAddress localAddress;

    private SctpFraming(SctpSettings settings, int ird, int ord, InetSocketAddress localAddress) {
        this.settings = Objects.requireNonNull(settings, "settings");
        if (ird < 0 || ord < 0) {
            throw new IllegalArgumentException("IRD and ORD must not be negative: " + ird + ", " + ord);
        }
        this.ird = ird;
        this.ord = ord;
        this.localAddress = localAddress;
    }

    /** The adaptation with these settings and IRD = ORD = {@value #DEFAULT_DEPTH}. */
    public static SctpFraming of(SctpSettings settings) {
        return new SctpFraming(settings, DEFAULT_DEPTH, DEFAULT_DEPTH, null);
    }

    /** The same framing with this IRD and ORD. */
    public SctpFraming irdOrd(int ird, int ord) {
        return new SctpFraming(settings, ird, ord, localAddress);
    }

    /**
     * The same framing with the connecting side bound to this one local address before connect (the
     * JDK otherwise binds every address, and the INIT lists them all); {@code null}: the JDK's choice.
     */
    public SctpFraming bindTo(InetSocketAddress local) {
        return new SctpFraming(settings, ird, ord, local);
    }

    /** The connecting side's local address, or {@code null}. */
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    public SctpSettings settings() {
        return settings;
    }

    public int ird() {
        return ird;
    }

    public int ord() {
        return ord;
    }

    @Override
    public String name() {
        return "SCTP";
    }

    /** SCTP associations, on NIO event loops (Netty's other transports have no SCTP). */
    @Override
    public io.netty.bootstrap.Bootstrap initiatorBootstrap(EventLoops loops) {
        return SctpBootstraps.client(loops.nioGroup(), this);
    }

    @Override
    public io.netty.bootstrap.ServerBootstrap responderBootstrap(EventLoops loops) {
        return SctpBootstraps.server(loops.nioGroup(), this);
    }

    /** The adaptation's startup is its adaptation indication alone: no private data. */
    @Override
    public boolean carriesPrivateData() {
        return false;
    }

    @Override
    public void addInitiator(ChannelPipeline pipeline) {
        SctpShim.addLast(pipeline, settings);
        pipeline.addLast(IwarpPipeline.LLP, new SctpLlpAdapter(this, true, null));
    }

    @Override
    public void addResponder(ChannelPipeline pipeline, Consumer<IwarpConnectionRequest> onRequest) {
        SctpShim.addLast(pipeline, settings);
        pipeline.addLast(IwarpPipeline.LLP, new SctpLlpAdapter(this, false, onRequest));
    }

    @Override
    public String toString() {
        return "SCTP adaptation, " + settings + ", IRD " + ird + " ORD " + ord;
    }
}
