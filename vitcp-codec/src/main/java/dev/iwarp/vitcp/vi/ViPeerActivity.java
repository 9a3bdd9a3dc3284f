package dev.iwarp.vitcp.vi;

/**
 * What the peer did to this VI, as its receive half saw it: RDMA Writes placed into our memory, RDMA Read
 * Requests answered from it, Sends delivered into our receive descriptors. Counted on the event loop, only for
 * messages that completed without error (a message in error ends a reliable VI instead, draft §3.6).
 *
 * @param writes        RDMA Write messages placed (their last segment arrived), draft §2.2.2.2.3
 * @param writeOctets   octets placed by RDMA Writes
 * @param readsAnswered RDMA Read Requests accepted and queued for a Read Response, draft §2.2.2.2.3
 * @param readOctets    octets those responses carry
 * @param sends         Send messages delivered to a receive descriptor, draft §2.2.2.2.3
 * @param sendOctets    octets of those Sends
 */
public record ViPeerActivity(long writes, long writeOctets, long readsAnswered, long readOctets, long sends,
                             long sendOctets) {
    /** "12 Writes (786432 octets placed), 3 Reads answered (196608 octets), 30 Sends (480 octets)". */
    @Override
    public String toString() {
        return writes + " Writes (" + writeOctets + " octets placed), " + readsAnswered + " Reads answered ("
                + readOctets + " octets), " + sends + " Sends (" + sendOctets + " octets)";
    }
}
