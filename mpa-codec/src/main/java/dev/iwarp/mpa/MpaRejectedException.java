package dev.iwarp.mpa;

/**
 * Startup ended with a rejection: an MPA Reply with R=1 (RFC 5044 §7.1.2 rules 2 and 3). Not an MPA
 * protocol error; the TCP connection stays open for the ULP to close or reuse.
 */
public final class MpaRejectedException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient MpaStartupFrame reply;
    private final boolean rejectedLocally;

    MpaRejectedException(MpaStartupFrame reply, boolean rejectedLocally) {
        super((rejectedLocally ? "local ULP rejected the connection" : "peer rejected the connection (Reply R=1)")
                + ", reply private data " + reply.privateDataLength() + " octets" + printable(reply.ulpPrivateData()));
        this.reply = reply;
        this.rejectedLocally = rejectedLocally;
    }

    /** The private data quoted when it is short printable ASCII (a reason such as "TLS required"), else "". */
    private static String printable(byte[] pd) {
        if (pd.length == 0 || pd.length > 120) {
            return "";
        }
        for (byte b : pd) {
            if (b < 0x20 || b > 0x7E) {
                return "";
            }
        }
        return ": \"" + new String(pd, java.nio.charset.StandardCharsets.US_ASCII) + "\"";
    }

    /** The Reply frame with R=1 (sent by us when {@link #rejectedLocally()}, else received). */
    public MpaStartupFrame reply() {
        return reply;
    }

    /** {@code true} when this side's ULP rejected (Responder), {@code false} when the peer did. */
    public boolean rejectedLocally() {
        return rejectedLocally;
    }
}
