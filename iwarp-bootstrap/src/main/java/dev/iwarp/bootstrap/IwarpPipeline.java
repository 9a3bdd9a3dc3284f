package dev.iwarp.bootstrap;

import dev.iwarp.ddp.DdpCodec;
import dev.iwarp.mpa.MpaRole;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupHandler;
import io.netty.channel.ChannelPipeline;

/**
 * Installs the iWARP handlers in a pipeline: MPA startup (which becomes the FPDU framer), the DDP
 * codec, and, when the queue pair is known, the RDMAP engine. Use it from your own
 * {@code ChannelInitializer} to run iWARP inside an existing Netty server.
 */
public final class IwarpPipeline {
    /** Handler names. */
    public static final String MPA = "mpa";
    public static final String DDP = "ddp";
    public static final String RDMAP = "rdmap";

    private IwarpPipeline() {
    }

    /** Adds MPA startup (for {@code role}) and the DDP codec at the end of the pipeline. */
    public static MpaStartupHandler addFraming(ChannelPipeline p, MpaRole role, MpaSettings settings) {
        MpaStartupHandler mpa = new MpaStartupHandler(role, settings);
        p.addLast(MPA, mpa);
        p.addLast(DDP, new DdpCodec());
        return mpa;
    }
}
