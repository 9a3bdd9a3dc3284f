package dev.iwarp.server.wire;

import dev.iwarp.ift.IftAdaptionIndication;
import dev.iwarp.mpa.MpaStartupFrame;
import dev.iwarp.vitcp.ViSegment;
import io.netty.buffer.ByteBuf;

/**
 * The framings a peer's first octets can show, each recognised by the framing's own startup code (MPA's keys, RFC 5044
 * §7.1.1; IFT's magic "RDDP"; a VI/TCP connection-management segment, draft-dicecco-vitcp-01 §3.2) or a TLS record
 * header (RFC 8446 §5.1), with the option a tool takes to speak it.
 */
public enum PeerFraming {
    MPA("MPA", "--wire iwarp"),
    VITCP("VI/TCP", "--wire vitcp"),
    IFT("IFT", "--wire ift"),
    TLS("TLS", "--tls");

    /** Octets that tell every framing here apart (MPA's key is the longest). */
    public static final int NEEDED = 16;

    private final String spoken;
    private final String option;

    PeerFraming(String spoken, String option) {
        this.spoken = spoken;
        this.option = option;
    }

    /** As a person names it: "MPA", "VI/TCP", "IFT", "TLS". */
    public String spoken() {
        return spoken;
    }

    /** The tools' option that speaks it. */
    public String option() {
        return option;
    }

    /** The framing the readable octets begin with, or null (unknown, or too few octets yet). Reads nothing. */
    public static PeerFraming of(ByteBuf first) {
        if (MpaStartupFrame.keyAt(first) != null) {
            return MPA;
        }
        if (IftAdaptionIndication.startsWithMagic(first)) {
            return IFT;
        }
        if (ViSegment.connectionSegmentAt(first) != null) {
            return VITCP;
        }
        return isTlsRecord(first) ? TLS : null;
    }

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
}
