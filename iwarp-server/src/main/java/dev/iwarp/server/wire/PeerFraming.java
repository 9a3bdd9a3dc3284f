package dev.iwarp.server.wire;

import dev.iwarp.ift.IftAdaptionIndication;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.vitcp.ViSegment;
import dev.iwarp.vitcp.ViSegmentType;
import dev.iwarp.vitcp.VitcpCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import java.nio.charset.StandardCharsets;

/**
 * The framings a peer's first octets can show, each recognised by the framing's own startup code (MPA's keys, RFC 5044
 * §7.1.1; IFT's magic "RDDP"; a VI/TCP connection-management segment, draft-dicecco-vitcp-01 §3.2) or a TLS record
 * header (RFC 8446 §5.1), with the option a tool takes to speak it and what a server of it answers a peer of another
 * framing (its own startup frame, refusing).
 */
public enum PeerFraming {
    MPA("MPA", "an MPA", "--wire iwarp") {
        @Override
        boolean startsWith(ByteBuf first) {
            return MpaStartupFrame.keyAt(first) != null;
        }

        /** RFC 5044 §7.1.3: a Reply with the Reject bit; the private data says why. */
        @Override
        ByteBuf refusal() {
            MpaStartupFrame reply = MpaStartupFrame.builder(MpaStartupFrame.Type.REPLY).rejected(true)
                    .ulpPrivateData(("this server speaks MPA (" + option() + ")").getBytes(StandardCharsets.US_ASCII))
                    .build();
            ByteBuf b = Unpooled.buffer(reply.encodedLength());
            reply.encode(b);
            return b;
        }
    },
    IFT("IFT", "an IFT", "--wire ift") {
        @Override
        boolean startsWith(ByteBuf first) {
            return IftAdaptionIndication.startsWithMagic(first);
        }

        /** An adaption indication: the magic is what the peer will see. */
        @Override
        ByteBuf refusal() {
            ByteBuf b = Unpooled.buffer(IftAdaptionIndication.LENGTH);
            IftAdaptionIndication.builder().build().encode(b);
            return b;
        }
    },
    VITCP("VI/TCP", "a VI/TCP", "--wire vitcp") {
        @Override
        boolean startsWith(ByteBuf first) {
            return ViSegment.connectionSegmentAt(first) != null;
        }

        @Override
        ByteBuf refusal() {
            return Unpooled.wrappedBuffer(ConnectReject.OCTETS);
        }
    },
    TLS("TLS", "a TLS", "--tls") {
        @Override
        boolean startsWith(ByteBuf first) {
            return isTlsRecord(first);
        }

        /** Nothing: TLS refuses plaintext itself. */
        @Override
        ByteBuf refusal() {
            return Unpooled.EMPTY_BUFFER;
        }
    };

    /** Octets that tell every framing here apart (MPA's key is the longest). */
    public static final int NEEDED = 16;

    private final String spoken;
    private final String withArticle;
    private final String option;

    PeerFraming(String spoken, String withArticle, String option) {
        this.spoken = spoken;
        this.withArticle = withArticle;
        this.option = option;
    }

    /** As a person names it: "MPA", "VI/TCP", "IFT", "TLS". */
    public String spoken() {
        return spoken;
    }

    /** Its name after an indefinite article, as a sentence uses it: "an MPA", "a VI/TCP". */
    public String withArticle() {
        return withArticle;
    }

    /** The tools' option that speaks it. */
    public String option() {
        return option;
    }

    /** The framing the readable octets begin with, or null (unknown, or too few octets yet). Reads nothing. */
    public static PeerFraming of(ByteBuf first) {
        for (PeerFraming f : values()) {
            if (f.startsWith(first)) {
                return f;
            }
        }
        return null;
    }

    /** Whether the readable octets of {@code first} begin as this framing's startup does (reads nothing). */
    abstract boolean startsWith(ByteBuf first);

    /** What a server of this framing answers a peer of another one: its own startup frame, refusing. */
    abstract ByteBuf refusal();

    /** RFC 8446 §5.1: ContentType 20..23, legacy_record_version 3.0 to 3.4 (a ClientHello may say 3.1). */
    static boolean isTlsRecord(ByteBuf in) {
        if (in.readableBytes() < 3) {
            return false;
        }
        int i = in.readerIndex();
        int type = in.getUnsignedByte(i);
        return type >= 20 && type <= 23 && in.getUnsignedByte(i + 1) == 3 && in.getUnsignedByte(i + 2) <= 4;
    }

    /**
     * What a client that speaks {@code own} tells its user when the server at {@code server} answered in
     * {@code theirs}: "the server at 127.0.0.1:7174 speaks MPA; use --wire iwarp".
     */
    public static String mismatch(java.net.SocketAddress server, PeerFraming own, PeerFraming theirs) {
        String at = "the server at " + Addresses.format(server) + " speaks ";
        if (own == TLS && theirs != TLS) {
            return at + theirs.spoken + " without TLS; leave out --tls" + (theirs == MPA ? "" : " and use "
                    + theirs.option);
        }
        return at + theirs.spoken + "; use " + theirs.option;
    }

    /** VipConnectReject's segment (draft-dicecco-vitcp-01 §4.3) as the VI/TCP encoder writes it, made at first use. */
    private static final class ConnectReject {
        static final byte[] OCTETS = encode(ViSegment.builder(ViSegmentType.CONNECT_REJECT).endOfMessage(true).build());

        private static byte[] encode(ViSegment s) {
            EmbeddedChannel ch = new EmbeddedChannel(new VitcpCodec());
            ch.writeOutbound(s);
            ByteBuf out = ch.readOutbound();
            try {
                return ByteBufUtil.getBytes(out);
            } finally {
                out.release();
                ch.finishAndReleaseAll();
            }
        }
    }
}
