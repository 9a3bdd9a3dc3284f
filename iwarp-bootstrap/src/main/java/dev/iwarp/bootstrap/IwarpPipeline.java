package dev.iwarp.bootstrap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.mpa.MpaRole;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupHandler;
import dev.iwarp.rdmap.engine.RdmaEngine;
import io.netty.channel.ChannelPipeline;

import java.util.function.Consumer;

/**
 * Installs the iWARP handlers in a pipeline: a framing's startup handler (which becomes its framer)
 * and contract adapter, the DDP codec, and, when the queue pair is known, the RDMAP engine. Use it
 * from your own {@code ChannelInitializer} to run iWARP inside an existing Netty server.
 *
 * <pre>
 *  [framing startup -&gt; framer] [llp adapter] [ddp] [rdmap]
 * </pre>
 */
public final class IwarpPipeline {
    /** Handler names. */
    public static final String MPA = "mpa";
    /** IFT's adaption handler, which becomes the IFT framer. */
    public static final String IFT = "ift";
    /** The adapter between a framing and DDP's lower-layer contract. */
    public static final String LLP = "llp";
    /** Name of the DDP codec in the pipeline. */
    public static final String DDP = "ddp";
    /** Name of the RDMAP engine in the pipeline. */
    public static final String RDMAP = "rdmap";

    private IwarpPipeline() {
    }

    /** Adds {@code framing}'s handlers for the connecting side and the DDP codec at the end of the pipeline. */
    public static void addInitiator(ChannelPipeline p, Framing framing) {
        framing.addInitiator(p);
        p.addLast(DDP, new DdpCodec());
    }

    /**
     * Adds {@code framing}'s handlers for the accepting side and the DDP codec; every valid incoming
     * startup reaches {@code onRequest} (with {@code null}, the framing's own request event travels on).
     */
    public static void addResponder(ChannelPipeline p, Framing framing, Consumer<IwarpConnectionRequest> onRequest) {
        framing.addResponder(p, onRequest);
        p.addLast(DDP, new DdpCodec());
    }

    /** Adds the RDMAP engine right after the DDP codec. */
    public static void addEngine(ChannelPipeline p, RdmaEngine engine) {
        p.addAfter(DDP, RDMAP, engine);
    }

    /**
     * Puts the RDMAP engine in the DDP codec's place (at the end of the pipeline when there is none): the engine
     * receives every ULPDU through the lower-layer contract and writes through it, so the codec would only hold a
     * pipeline slot on every connection. What the stack's own connections use.
     */
    public static void bindEngine(ChannelPipeline p, RdmaEngine engine) {
        if (p.get(DDP) instanceof DdpCodec) {
            p.replace(DDP, RDMAP, engine);
        } else {
            p.addLast(RDMAP, engine);
        }
    }

    /**
     * MPA for {@code role} and the DDP codec at the end of the pipeline; a Responder's
     * {@code MpaConnectRequest} travels on up the pipeline for your handler to accept (then add the
     * engine with {@link #addEngine}).
     */
    public static MpaStartupHandler addFraming(ChannelPipeline p, MpaRole role, MpaSettings settings) {
        MpaFraming mpa = MpaFraming.of(settings);
        if (role == MpaRole.INITIATOR) {
            addInitiator(p, mpa);
        } else {
            addResponder(p, mpa, null);
        }
        return (MpaStartupHandler) p.get(MPA);
    }
}
