package dev.iwarp.bootstrap;

import dev.iwarp.framing.DirectReadAllocator;
import dev.iwarp.mpa.MpaRevisionRefusedException;
import dev.iwarp.mpa.MpaRole;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.MpaStartupHandler;
import io.netty.channel.ChannelPipeline;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * MPA (RFC 5044, RFC 6581, Rev 0 of the 2004 draft) as the framing of an iWARP stream: an
 * {@link MpaStartupHandler} named {@link IwarpPipeline#MPA} (it becomes the FPDU framer) and the
 * adapter to DDP's lower-layer contract named {@link IwarpPipeline#LLP}. Unless the settings name
 * their own, the RFC 6581 negotiation failures an Initiator reports on the wire (codes 6 and 7) are
 * sent as RDMAP Terminates built here.
 *
 * <p>Unless {@link #withoutDirectReads()} (or TLS, {@link #overTls}) says otherwise, the framer reads large
 * payloads from the socket straight into their registered memory: the octets the socket reads reach the
 * framer unchanged (handlers below it may watch them, as a capture or a guard does, but not transform them).
 * Immutable.
 */
public final class MpaFraming implements Framing {
    private final MpaSettings settings;
    /** Whether the framer may have socket reads made into payload destinations. */
    private final boolean directReads;

    private MpaFraming(MpaSettings settings, boolean directReads) {
        Objects.requireNonNull(settings, "settings");
        this.settings = settings.terminateFactory() != null ? settings
                : settings.toBuilder().terminateFactory(MpaLlpAdapter::terminateUlpdu).build();
        this.directReads = directReads;
    }

    /** MPA with these settings. */
    public static MpaFraming of(MpaSettings settings) {
        return new MpaFraming(settings, true);
    }

    /**
     * This framing for a pipeline in which a handler below MPA transforms the octets the socket reads (e.g. an
     * {@code SslHandler} added by hand rather than through the stack's TLS options): every payload is then
     * received through ordinary buffers and copied once into place, never read into its memory directly.
     */
    public MpaFraming withoutDirectReads() {
        return directReads ? new MpaFraming(settings, false) : this;
    }

    /** Whether the framer reads large payloads from the socket straight into their memory (see above). */
    public boolean readsDirectly() {
        return directReads;
    }

    /** The settings in force (with the Terminate factory filled in). */
    public MpaSettings settings() {
        return settings;
    }

    @Override
    public String name() {
        return "MPA Rev " + settings.revision();
    }

    @Override
    public void addInitiator(ChannelPipeline pipeline) {
        DirectReadAllocator reads = directReads(pipeline);
        pipeline.addLast(IwarpPipeline.MPA, new MpaStartupHandler(MpaRole.INITIATOR, settings));
        pipeline.addLast(IwarpPipeline.LLP, new MpaLlpAdapter(null, reads));
    }

    @Override
    public void addResponder(ChannelPipeline pipeline, Consumer<IwarpConnectionRequest> onRequest) {
        DirectReadAllocator reads = directReads(pipeline);
        pipeline.addLast(IwarpPipeline.MPA, new MpaStartupHandler(MpaRole.RESPONDER, settings));
        pipeline.addLast(IwarpPipeline.LLP, new MpaLlpAdapter(onRequest, reads));
    }

    /**
     * Lets the framer say what the next socket read goes into (a payload's destination, or just the octets
     * up to the next DDP header), so that a large payload is read straight into its region: set here, before
     * the channel's first read (Netty keeps the handle made then), and handed to the framer once it runs.
     * Null without direct reads (TLS, or {@link #withoutDirectReads()}).
     */
    private DirectReadAllocator directReads(ChannelPipeline pipeline) {
        if (!directReads) {
            return null;
        }
        return DirectReadAllocator.installOn(pipeline.channel());
    }

    /** Rev 1 on a new connection when the peer closed on our Rev 2 Request and fallback is on (RFC 6581 §5). */
    @Override
    public Framing retryAfter(Throwable cause) {
        if (cause instanceof MpaRevisionRefusedException && settings.rev1Fallback() && settings.revision() == 2) {
            return new MpaFraming(settings.toBuilder().revision(1).build(), directReads);
        }
        return null;
    }

    /**
     * Over TLS the unit below MPA is a TLS record, not a TCP segment: unless the settings fix an EMSS,
     * MULPDU comes from the record payload limit (RFC 5044 §4.5's formula with EMSS = 16384, so an
     * FPDU with CRC fills one record exactly), not from TCP_MAXSEG. The socket carries records, not FPDUs:
     * nothing is read directly.
     */
    @Override
    public Framing overTls(int recordPayload) {
        return new MpaFraming(settings.emss() != 0 ? settings : settings.toBuilder().emss(recordPayload).build(),
                false);
    }

    @Override
    public String toString() {
        return name();
    }
}
