package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.Framing;
import dev.iwarp.bootstrap.IftFraming;
import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.MpaFraming;
import dev.iwarp.bootstrap.SctpFraming;
import dev.iwarp.ddp.llp.LlpParameters;
import dev.iwarp.ift.IftFramer;
import dev.iwarp.ift.IftParameters;
import dev.iwarp.mpa.MpaFramer;
import dev.iwarp.mpa.MpaParameters;
import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.sctp.SctpAdaptation;
import dev.iwarp.verbs.QueuePair;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelPipeline;

import java.io.IOException;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * What the tools know of each framing that DDP and RDMAP run over on an {@link IwarpStack}: the {@code --wire} it
 * is, how a peer's first octets show it, how the tools' Initiator is set up from the CRC and read depth a command
 * asks for, what its startup answer is called, its listening line, how its negotiated parameters read, and what it
 * tells serve's guard about the messages it hands up ({@link FramedMessages}).
 * {@link IwarpServerWire} and {@link IwarpClientWire} ask the constant they were made with and never test which
 * framing they run; a new framing is one more constant here.
 */
public enum WireFraming implements FramedMessages {
    /** MPA over TCP (RFC 5044, RFC 6581). */
    MPA("iwarp", MpaFraming.class, MpaParameters.class, PeerFraming.MPA, "MPA Reply") {
        /** A fixed framing (ping's, sendrecv's MPA options), else MPA Rev 2 with the asked CRC, IRD 1, ORD = depth. */
        @Override
        Framing initiator(Framing fixed, boolean crc, int readDepth) {
            return fixed != null ? fixed : MpaFraming.of(MpaSettings.builder().revision(2).crc(crc).ird(1)
                    .ord(Math.max(1, Math.min(readDepth, 128))).build());
        }

        @Override
        String listening(Framing framing) {
            MpaSettings mpa = ((MpaFraming) framing).settings();
            return "MPA Rev " + mpa.revision() + ", CRC " + (mpa.crc() ? "forced" : "as the client asks")
                    + ", IRD " + mpa.ird() + " ORD " + mpa.ord();
        }

        /** With the MULPDU in effect now, which follows the path's EMSS after startup (RFC 5044 §4.5). */
        @Override
        String describe(LlpParameters p) {
            return IwarpWire.describe(p.framing(MpaParameters.class), p.mulpdu());
        }

        @Override
        String summary(LlpParameters p) {
            MpaParameters mpa = p.framing(MpaParameters.class);
            return "MPA Rev " + mpa.revision() + " CRC " + (mpa.crc() ? "on" : "off");
        }

        @Override
        boolean crc(LlpParameters p) {
            return p.framing(MpaParameters.class).crc();
        }

        @Override
        public BooleanSupplier partialMessage(ChannelPipeline p) {
            MpaFramer framer = p.get(MpaFramer.class);
            return framer == null ? null : framer::holdsIncompleteFpdu;
        }

        @Override
        public LongSupplier messagesCompleted(ChannelPipeline p) {
            MpaFramer framer = p.get(MpaFramer.class);
            return framer == null ? null : framer::fpdusReceived;
        }
    },

    /** IFT (draft-williams-iwarp-ift-01): no private data, so serve's setup data is its first Send. */
    IFT("ift", IftFraming.class, IftParameters.class, PeerFraming.IFT, "IFT phase 1 indication") {
        /**
         * Node A with the given settings (the CRC wish is ignored: they decide), IRD 1 and ORD = the read depth capped
         * at {@link IftFraming#DEFAULT_DEPTH} (serve's default IRD: IFT negotiates neither).
         */
        @Override
        Framing initiator(Framing fixed, boolean crc, int readDepth) {
            return ((IftFraming) fixed).irdOrd(1, Math.max(1, Math.min(readDepth, IftFraming.DEFAULT_DEPTH)));
        }

        @Override
        String setupCarrier() {
            return "setup Send (IFT)";
        }

        @Override
        String listening(Framing framing) {
            return IftWire.listening((IftFraming) framing);
        }

        @Override
        String describe(LlpParameters p) {
            return IftWire.describe(p.framing(IftParameters.class), p.ird(), p.ord());
        }

        @Override
        String summary(LlpParameters p) {
            return IftWire.summary(p.framing(IftParameters.class));
        }

        @Override
        boolean crc(LlpParameters p) {
            return IftWire.crc(p.framing(IftParameters.class));
        }

        @Override
        public BooleanSupplier partialMessage(ChannelPipeline p) {
            IftFramer framer = p.get(IftFramer.class);
            return framer == null ? null : framer::holdsIncompleteFrame;
        }

        @Override
        public LongSupplier messagesCompleted(ChannelPipeline p) {
            IftFramer framer = p.get(IftFramer.class);
            return framer == null ? null : framer::framesReceived;
        }
    },

    /**
     * The SCTP DDP/RDMA adaptation (draft-stewart-otis-sctp-ddp-rdma-00) on the JDK's SCTP channels: no private
     * data (serve's setup data is its first Send), no first octets to tell apart (SCTP messages, not a stream).
     */
    SCTP("sctp", SctpFraming.class, SctpAdaptation.class, null, "SCTP adaptation indication") {
        @Override
        Framing initiator(Framing fixed, boolean crc, int readDepth) {
            return fixed;
        }

        @Override
        String setupCarrier() {
            return "setup Send (SCTP)";
        }

        @Override
        String connectFailed(String server, String cause) {
            return "cannot connect to " + server + " over SCTP: " + cause;
        }

        @Override
        String noAnswer(String server, long timeoutMs) {
            return "cannot connect to " + server + " over SCTP within " + timeoutMs + " ms";
        }

        @Override
        void checkEstablished(QueuePair qp) throws IOException {
            if (qp.connectionParameters().framing(SctpAdaptation.class).peer() == null) {
                throw new IOException("the peer indicated no SCTP adaptation");
            }
        }

        @Override
        String transport(IwarpStack stack) {
            return "SCTP, nio"; // Netty has SCTP on NIO only, whatever the stack's transport
        }

        @Override
        String listening(Framing framing) {
            return framing.toString();
        }

        @Override
        String describe(LlpParameters p) {
            return p.toString();
        }

        @Override
        String summary(LlpParameters p) {
            return p.framingName();
        }

        @Override
        boolean crc(LlpParameters p) {
            return false; // SCTP's own CRC32c is below the adaptation
        }
    };

    /** RDMAP opcode of an RDMA Read Request (RFC 5040 §4.3). */
    private static final int READ_REQUEST = 1;
    /** Octets of a tagged / untagged DDP header with the RDMAP control octet (RFC 5041 §4, RFC 5040 §4.1). */
    private static final int TAGGED_HEADER = 14;
    private static final int UNTAGGED_HEADER = 18;
    /** Offset of the RDMA Read Message Size in an untagged ULPDU carrying a Read Request (RFC 5040 §4.4). */
    private static final int READ_SIZE_OFFSET = UNTAGGED_HEADER + 12;

    private final String wireName;
    private final Class<? extends Framing> type;
    private final Class<?> parameters;
    private final PeerFraming peerFraming;
    private final String startupAnswer;

    WireFraming(String wireName, Class<? extends Framing> type, Class<?> parameters, PeerFraming peerFraming,
                String startupAnswer) {
        this.wireName = wireName;
        this.type = type;
        this.parameters = parameters;
        this.peerFraming = peerFraming;
        this.startupAnswer = startupAnswer;
    }

    /** The constant of {@code framing}; {@link IllegalArgumentException} for a framing the tools do not know. */
    public static WireFraming of(Framing framing) {
        for (WireFraming f : values()) {
            if (f.type.isInstance(framing)) {
                return f;
            }
        }
        throw new IllegalArgumentException("no tool wire runs " + framing);
    }

    /** The constant whose framing negotiated {@code p}, or null for a framing the tools do not know. */
    static WireFraming of(LlpParameters p) {
        for (WireFraming f : values()) {
            if (p.isFraming(f.parameters)) {
                return f;
            }
        }
        return null;
    }

    /** The {@code --wire} value: "iwarp", "ift", "sctp". */
    public String wireName() {
        return wireName;
    }

    /** How a peer's first octets show this framing, or null where there is nothing to tell apart (SCTP). */
    public PeerFraming peerFraming() {
        return peerFraming;
    }

    /** What the Responder answers a connecting peer with, as a client waiting for it names it: "MPA Reply". */
    public String startupAnswer() {
        return startupAnswer;
    }

    /** The Initiator's framing: {@code fixed} (the tool's options; null only for MPA) set up for the wishes given. */
    abstract Framing initiator(Framing fixed, boolean crc, int readDepth);

    /** Where serve's setup data (its target advertisement) reaches a client: "MPA Reply", "setup Send (IFT)". */
    String setupCarrier() {
        return startupAnswer;
    }

    /** The error when connecting failed with {@code cause}. */
    String connectFailed(String server, String cause) {
        return "cannot connect to " + server + ": " + cause;
    }

    /** The error when the startup answer did not come within {@code timeoutMs}. */
    String noAnswer(String server, long timeoutMs) {
        return "cannot connect to " + server + ": no " + startupAnswer + " within " + timeoutMs + " ms";
    }

    /** Refuses a connection the framing established but the tools cannot use. */
    void checkEstablished(QueuePair qp) throws IOException {
    }

    /** What carries the wire, for the server's start-up line: "nio transport". */
    String transport(IwarpStack stack) {
        return stack.transport().name().toLowerCase(Locale.ROOT) + " transport";
    }

    /** serve's listening settings for {@code framing} (one of this constant's). */
    abstract String listening(Framing framing);

    /** The negotiation line ping, probe, sendrecv and serve print. */
    abstract String describe(LlpParameters p);

    /** The short phrase of bench's header. */
    abstract String summary(LlpParameters p);

    /** Whether we send a CRC of this framing. */
    abstract boolean crc(LlpParameters p);

    /** Messages arrive whole (SCTP): nothing is ever held. MPA and IFT name their framers. */
    @Override
    public BooleanSupplier partialMessage(ChannelPipeline p) {
        return null;
    }

    /**
     * Whether a ULPDU the framing handed up (a DDP segment) moves data: payload octets beyond its headers, or a Read
     * Request of a non-zero size. Anything else counts.
     */
    @Override
    public boolean movesData(Object msg) {
        if (!(msg instanceof ByteBuf b)) {
            return true;
        }
        int at = b.readerIndex();
        int length = b.readableBytes();
        if (length < 2) {
            return false;
        }
        boolean tagged = (b.getByte(at) & 0x80) != 0;
        if (tagged) {
            return length > TAGGED_HEADER;
        }
        if ((b.getByte(at + 1) & 0x0F) == READ_REQUEST) {
            return length >= READ_SIZE_OFFSET + 4 && b.getInt(at + READ_SIZE_OFFSET) != 0;
        }
        return length > UNTAGGED_HEADER;
    }
}
