package dev.iwarp.bootstrap;

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
 * Immutable.
 */
public final class IftFraming implements Framing {
    /** Default IRD and ORD (the ULP's out-of-band agreement; MPA's defaults). */
    public static final int DEFAULT_DEPTH = 16;

    private final IftSettings settings;
    private final int ird;
    private final int ord;

    private IftFraming(IftSettings settings, int ird, int ord) {
        this.settings = Objects.requireNonNull(settings, "settings");
        if (ird < 0 || ord < 0) {
            throw new IllegalArgumentException("IRD and ORD must not be negative: " + ird + ", " + ord);
        }
        this.ird = ird;
        this.ord = ord;
    }

    /** IFT with these settings and IRD = ORD = {@value #DEFAULT_DEPTH}. */
    public static IftFraming of(IftSettings settings) {
        return new IftFraming(settings, DEFAULT_DEPTH, DEFAULT_DEPTH);
    }

    /** The same framing with this IRD (Read Requests we accept outstanding) and ORD (we may have outstanding). */
    public IftFraming irdOrd(int ird, int ord) {
        return new IftFraming(settings, ird, ord);
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
        pipeline.addLast(IwarpPipeline.IFT, new IftAdaptionHandler(settings.toBuilder().role(IftRole.NODE_A).build()));
        pipeline.addLast(IwarpPipeline.LLP, new IftLlpAdapter(this, null));
    }

    @Override
    public void addResponder(ChannelPipeline pipeline, Consumer<IwarpConnectionRequest> onRequest) {
        pipeline.addLast(IwarpPipeline.IFT, new IftAdaptionHandler(settings.toBuilder().role(IftRole.NODE_B).build()));
        pipeline.addLast(IwarpPipeline.LLP, new IftLlpAdapter(this, onRequest));
    }

    @Override
    public String toString() {
        return "IFT " + settings + ", IRD " + ird + " ORD " + ord;
    }
}
