package dev.iwarp.bootstrap;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.ift.IftAdaptionHandler;
import dev.iwarp.ift.IftRole;
import dev.iwarp.ift.IftSettings;
import io.netty.channel.ChannelPipeline;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * IFT (draft-williams-iwarp-ift-01) as the framing of an iWARP stream: an {@link IftAdaptionHandler}
 * named {@link IwarpPipeline#IFT} (it becomes the IFT framer) and the adapter to DDP's lower-layer
 * contract named {@link IwarpPipeline#LLP}. The connecting side is node A, the accepting side node B.
 *
 * <p>IFT negotiates no IRD and ORD (the draft leaves them to the ULP, agreed before the indications):
 * they are configuration here, the same on both sides by default (16 and 16, as MPA's defaults).
 *
 * <p>Unless {@link #withoutDirectReads()} (or TLS, {@link #overTls}) says otherwise, the framer reads large
 * payloads from the socket straight into their registered memory: the octets the socket reads reach the
 * framer unchanged (handlers below it may watch them, as a capture or a guard does, but not transform them).
 * Immutable.
 */
public final class IftFraming implements Framing {
    /** Default IRD and ORD (the ULP's out-of-band agreement; MPA's defaults). */
    public static final int DEFAULT_DEPTH = 16;

    private final IftSettings settings;
    private final int ird;
    private final int ord;
    /** Whether the framer may have socket reads made into payload destinations. */
    private final boolean directReads;

    private IftFraming(IftSettings settings, int ird, int ord) {
        this(settings, ird, ord, true);
    }

    private IftFraming(IftSettings settings, int ird, int ord, boolean directReads) {
        this.settings = Objects.requireNonNull(settings, "settings");
        if (ird < 0 || ord < 0) {
            throw new IllegalArgumentException("IRD and ORD must not be negative: " + ird + ", " + ord);
        }
        this.ird = ird;
        this.ord = ord;
        this.directReads = directReads;
    }

    /** IFT with these settings and IRD = ORD = {@value #DEFAULT_DEPTH}. */
    public static IftFraming of(IftSettings settings) {
        return new IftFraming(settings, DEFAULT_DEPTH, DEFAULT_DEPTH);
    }

    /** The same framing with this IRD (Read Requests we accept outstanding) and ORD (we may have outstanding). */
    public IftFraming irdOrd(int ird, int ord) {
        return new IftFraming(settings, ird, ord, directReads);
    }

    /**
     * This framing for a pipeline in which a handler below IFT transforms the octets the socket reads (e.g. an
     * {@code SslHandler} added by hand rather than through the stack's TLS options): every payload is then
     * received through ordinary buffers and copied once into place, never read into its memory directly.
     */
    public IftFraming withoutDirectReads() {
        return directReads ? new IftFraming(settings, ird, ord, false) : this;
    }

    /** Whether the framer reads large payloads from the socket straight into their memory (see above). */
    public boolean readsDirectly() {
        return directReads;
    }

    /** Over TLS the socket carries records, not IFT frames: nothing is read directly. */
    @Override
    public Framing overTls(int recordPayload) {
        return withoutDirectReads();
    }

    /** The IFT settings of the adaption. */
    public IftSettings settings() {
        return settings;
    }

    /** The IRD this framing offers: RDMA Read Requests we accept outstanding. */
    public int ird() {
        return ird;
    }

    /** The ORD this framing asks for: RDMA Read Requests we may have outstanding. */
    public int ord() {
        return ord;
    }

    /** IFT's adaption indications carry no ULP data: the ULP agrees on everything before them (IFT draft §4). */
    @Override
    public boolean carriesPrivateData() {
        return false;
    }

    @Override
    public String name() {
        return "IFT";
    }

    @Override
    public void addInitiator(ChannelPipeline pipeline) {
        DirectReadAllocator reads = directReads(pipeline);
        pipeline.addLast(IwarpPipeline.IFT, new IftAdaptionHandler(settings.toBuilder().role(IftRole.NODE_A).build()));
        pipeline.addLast(IwarpPipeline.LLP, new IftLlpAdapter(this, null, reads));
    }

    @Override
    public void addResponder(ChannelPipeline pipeline, Consumer<IwarpConnectionRequest> onRequest) {
        DirectReadAllocator reads = directReads(pipeline);
        pipeline.addLast(IwarpPipeline.IFT, new IftAdaptionHandler(settings.toBuilder().role(IftRole.NODE_B).build()));
        pipeline.addLast(IwarpPipeline.LLP, new IftLlpAdapter(this, onRequest, reads));
    }

    /**
     * Lets the framer say what the next socket read goes into (a payload's destination, or the octets up to the
     * next frame's DDP header): set here, before the channel's first read (Netty keeps the handle made then),
     * and handed to the framer once the adaption completed. Null without direct reads.
     */
    private DirectReadAllocator directReads(ChannelPipeline pipeline) {
        if (!directReads) {
            return null;
        }
        return DirectReadAllocator.installOn(pipeline.channel());
    }

    @Override
    public String toString() {
        return "IFT " + settings + ", IRD " + ird + " ORD " + ord;
    }
}
