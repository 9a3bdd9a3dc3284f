package dev.iwarp.vitcp.vi;

/** The running counts behind {@link ViPeerActivity}, kept by {@link ViReceiver} on the event loop. */
final class PeerCounts {
    long writes;
    /** Added per placed segment: a Write that fails midway still placed these. */
    long writeOctets;
    long readsAnswered;
    long readOctets;
    long sends;
    long sendOctets;

    /** A Send ({@code send}) or an RDMA Write of {@code octets} completed without error. */
    void messageDone(boolean send, long octets) {
        if (send) {
            sends++;
            sendOctets += octets;
        } else {
            writes++;
        }
    }

    void readAnswered(long octets) {
        readsAnswered++;
        readOctets += octets;
    }

    ViPeerActivity snapshot() {
        return new ViPeerActivity(writes, writeOctets, readsAnswered, readOctets, sends, sendOctets);
    }
}
