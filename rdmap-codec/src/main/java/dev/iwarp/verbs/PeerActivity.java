package dev.iwarp.verbs;

/**
 * What the peer did to this end of a stream, as its responder saw it: RDMA Writes placed into our memory,
 * RDMA Read Requests answered from it, Sends delivered into our receives. Counted on the event loop and
 * only for operations that succeeded (a refused Write or Read ends the stream with a Terminate instead).
 *
 * @param writes         RDMA Write messages placed (their last segment arrived), RFC 5040 §4.3
 * @param writeOctets    octets placed by RDMA Writes
 * @param readsAnswered  RDMA Read Requests answered with a Read Response, RFC 5040 §4.4
 * @param readOctets     octets sent in those responses
 * @param sends          Send messages (and Immediate Data) delivered to a posted receive, RFC 5040 §5.3
 * @param sendOctets     octets of those Sends
 */
public record PeerActivity(long writes, long writeOctets, long readsAnswered, long readOctets, long sends,
                           long sendOctets) {
    /** "12 Writes (786432 octets placed), 3 Reads answered (196608 octets), 30 Sends (480 octets)". */
    @Override
    public String toString() {
        return writes + " Writes (" + writeOctets + " octets placed), " + readsAnswered + " Reads answered ("
                + readOctets + " octets), " + sends + " Sends (" + sendOctets + " octets)";
    }
}
