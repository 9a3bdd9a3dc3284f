package dev.iwarp.mpa;

import java.util.List;
import java.util.Set;

/**
 * The decisions of MPA startup as pure functions of the frames and the settings: which Request to
 * send, whether a Request or Reply is acceptable, the Reply to a Request, and the parameters both
 * frames imply. {@link MpaStartupHandler} does the I/O around them.
 */
final class MpaNegotiation {
    private MpaNegotiation() {
    }

    /** The Request an Initiator sends (RFC 5044 §7.1.2 rule 1; RFC 6581 words with Rev 2). */
    static MpaStartupFrame request(MpaSettings s) {
        MpaStartupFrame.Builder b = MpaStartupFrame.builder(MpaStartupFrame.Type.REQUEST)
                .markers(s.markers()).crc(s.crc()).revision(s.revision()).ulpPrivateData(s.privateData());
        if (s.revision() == 2) {
            if (s.peerToPeer()) {
                Set<RtrType> offered = MpaSettings.asSet(s.rtrTypes());
                // a Read RTR consumes one ORD credit at the Initiator (mpa-rev2 §4)
                int ord = offered.contains(RtrType.READ) ? Math.max(1, s.ord()) : s.ord();
                b.irdOrd(MpaIrdOrd.peerToPeer(s.ird(), ord, offered));
            } else {
                b.irdOrd(MpaIrdOrd.of(s.ird(), s.ord()));
            }
        }
        return b.build();
    }

    /** Responder: checks a well-formed Request can be served (RFC 5044 §7.1.1 Rev rule). */
    static void checkRequest(MpaStartupFrame request, MpaSettings s) {
        if (request.type() != MpaStartupFrame.Type.REQUEST) {
            throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME,
                    "received an MPA Reply key where a Request was expected");
        }
        int rev = request.revision();
        if (rev > s.revision() || rev < s.minRevision()) {
            // RFC 5044 §7.1.1: a receiver that cannot interoperate with Rev closes and reports locally
            throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME, "Request has Rev " + rev
                    + "; this Responder speaks Rev " + s.minRevision() + ".." + s.revision());
        }
    }

    /**
     * Responder: the Reply to an acceptable Request (RFC 5044 §7.1.2 rule 2; RFC 6581 §3-§4 for the
     * IRD/ORD words). {@code ird}/{@code ord} are the Responder ULP's values (normally the settings').
     * C is echoed when the Initiator set it: CRC is on either way (RFC 5044 §7.1.1), and an Initiator
     * that requires CRC (siw built with mpa_crc_required) refuses a C=0 Reply (siw_cm.c).
     */
    static MpaStartupFrame reply(MpaStartupFrame request, MpaSettings s, boolean reject, byte[] privateData,
                                 int ird, int ord) {
        MpaStartupFrame.Builder b = MpaStartupFrame.builder(MpaStartupFrame.Type.REPLY)
                .markers(s.markers()).crc(s.crc() || request.crc()).rejected(reject).revision(request.revision())
                .ulpPrivateData(privateData);
        MpaIrdOrd peer = request.irdOrd();
        if (peer != null) {
            if (reject) {
                b.irdOrd(MpaIrdOrd.of(0, 0));
            } else {
                // ORD no larger than the Initiator's IRD, IRD enough for the Initiator's ORD (RFC 6581 §3);
                // 0x3FFF from the peer constrains nothing (mpa-rev2 §2).
                int replyOrd = peer.ird() == MpaIrdOrd.MAX_VALUE ? ord : Math.min(ord, peer.ird());
                int replyIrd = peer.ord() == MpaIrdOrd.MAX_VALUE ? ird : Math.min(ird, peer.ord());
                RtrType rtr = peer.peerToPeer() && s.acceptPeerToPeer()
                        ? chooseRtr(peer.rtrTypes(), s.rtrTypes(), ird) : null;
                if (rtr == null) {
                    b.irdOrd(MpaIrdOrd.of(replyIrd, replyOrd));
                } else {
                    if (rtr == RtrType.READ) {
                        replyIrd = Math.max(1, replyIrd); // the Read RTR takes one IRD slot (mpa-rev2 §4)
                    }
                    b.irdOrd(MpaIrdOrd.peerToPeer(replyIrd, replyOrd, Set.of(rtr)));
                }
            }
        }
        return b.build();
    }

    private static RtrType chooseRtr(Set<RtrType> offered, List<RtrType> preference, int ird) {
        for (RtrType t : preference) {
            if (offered.contains(t) && (t != RtrType.READ || ird > 0)) {
                return t;
            }
        }
        return null;
    }

    /** Responder: parameters after sending an accepting Reply. */
    static MpaParameters responderParameters(MpaStartupFrame request, MpaStartupFrame reply, MpaSettings s,
                                             int emss, int ird, int ord) {
        int finalIrd = ird;
        int finalOrd = ord;
        RtrType rtr = null;
        MpaIrdOrd words = reply.irdOrd();
        if (words != null) {
            finalIrd = words.ird();
            finalOrd = words.ord();
            if (words.peerToPeer()) {
                rtr = words.rtrTypes().iterator().next();
            }
        }
        boolean markersTx = request.markers();
        return new MpaParameters(MpaRole.RESPONDER, reply.revision(), request.crc() || reply.crc(), markersTx,
                reply.markers(), request, reply, finalIrd, finalOrd, rtr, MpaFramer.mulpdu(emss, markersTx),
                s.maxUlpduLength(), !s.responderMaySendFirst());
    }

    /**
     * Initiator: checks the Reply's format-level acceptability (RFC 5044 §7.1.2 rules 3, 5, 8; RFC 6581
     * §5). Called before looking at R.
     */
    static void checkReply(MpaStartupFrame request, MpaStartupFrame reply, MpaSettings s) {
        if (reply.type() != MpaStartupFrame.Type.REPLY) {
            // RFC 5044 §7.1.2 rule 8: the keys differ so an Initiator/Initiator mis-start is detected
            throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME,
                    "received an MPA Request where the Reply was expected: Initiator/Initiator mis-start");
        }
        int sent = request.revision();
        int got = reply.revision();
        if (got > sent) {
            throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME,
                    "Reply has Rev " + got + " but the Request had Rev " + sent);
        }
        if (got < sent && (got < s.minRevision() || (sent == 2 && !s.rev1Fallback()))) {
            throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME, "Reply has Rev " + got
                    + " to a Rev " + sent + " Request" + (sent == 2 ? " (RFC 6581 §5; enable rev1Fallback to accept)" : ""));
        }
        if (sent == 2 && got == 2 && request.enhanced() && !reply.enhanced()) {
            throw new MpaException(MpaErrorCode.INVALID_STARTUP_FRAME,
                    "Rev 2 Reply without the enhanced flag and IRD/ORD words to an enhanced Request (RFC 6581)");
        }
    }

    /**
     * Initiator: parameters from an accepting Reply, or an {@link MpaException} with code 6 or 7
     * when the RFC 6581 negotiation cannot work (mpa-rev2 §3-§4).
     */
    static MpaParameters initiatorParameters(MpaStartupFrame request, MpaStartupFrame reply, MpaSettings s,
                                             int emss) {
        MpaIrdOrd mine = request.irdOrd();
        MpaIrdOrd theirs = reply.irdOrd();
        int ird = s.ird();
        int ord = s.ord();
        RtrType rtr = null;
        if (mine != null && theirs != null) {
            ird = mine.ird();
            ord = theirs.ird() == MpaIrdOrd.MAX_VALUE ? mine.ord() : Math.min(mine.ord(), theirs.ird());
            if (theirs.ord() != MpaIrdOrd.MAX_VALUE && theirs.ord() > ird) {
                if (theirs.ord() > s.maxIrd()) {
                    throw new MpaException(MpaErrorCode.INSUFFICIENT_IRD, "Responder's ORD " + theirs.ord()
                            + " exceeds the largest IRD this Initiator can provide (" + s.maxIrd() + ")");
                }
                ird = theirs.ord(); // raise our IRD to the Responder's ORD (RFC 6581 §3)
            }
            if (theirs.peerToPeer()) {
                Set<RtrType> chosen = theirs.rtrTypes();
                if (!mine.peerToPeer()) {
                    throw new MpaException(MpaErrorCode.NO_MATCHING_RTR,
                            "Reply selects peer-to-peer " + chosen + " but the Request did not ask for it");
                }
                if (chosen.size() != 1 || !mine.rtrTypes().containsAll(chosen)) {
                    throw new MpaException(MpaErrorCode.NO_MATCHING_RTR, "Reply selects RTR " + chosen
                            + "; the Request offered " + mine.rtrTypes() + " and exactly one must be chosen");
                }
                rtr = chosen.iterator().next();
            }
        }
        boolean markersTx = reply.markers();
        return new MpaParameters(MpaRole.INITIATOR, reply.revision(), request.crc() || reply.crc(), markersTx,
                request.markers(), request, reply, ird, ord, rtr, MpaFramer.mulpdu(emss, markersTx),
                s.maxUlpduLength(), false);
    }

    /**
     * The Reply refusing a Request with M=1 while markers are not accepted, as siw answers it (siw_cm.c,
     * protocol-based reject): the Request's header with the Reply key, R=1, M=0, C and Rev echoed, zero IRD/ORD
     * words if enhanced, no ULP data.
     */
    static MpaStartupFrame markersRefusal(MpaStartupFrame request) {
        MpaStartupFrame.Builder b = MpaStartupFrame.builder(MpaStartupFrame.Type.REPLY).markers(false)
                .crc(request.crc()).rejected(true).revision(request.revision()).ulpPrivateData(new byte[0]);
        if (request.irdOrd() != null) {
            b.irdOrd(MpaIrdOrd.of(0, 0));
        }
        return b.build();
    }

    /**
     * The parameters an Initiator frames its Terminate with after the RFC 6581 failures (codes 6 and 7), in full
     * operation as far as the Reply took it (RFC 6581 §3-§4): the Reply's revision and markers, CRC if either
     * frame asked for it, MULPDU from the default EMSS.
     */
    static MpaParameters terminateParameters(MpaStartupFrame request, MpaStartupFrame reply, MpaSettings s) {
        return new MpaParameters(MpaRole.INITIATOR, reply.revision(),
                request.crc() || reply.crc(), reply.markers(), request.markers(), request, reply,
                s.ird(), s.ord(), null, MpaFramer.mulpdu(MpaSettings.DEFAULT_EMSS, reply.markers()),
                s.maxUlpduLength(), false);
    }
}
