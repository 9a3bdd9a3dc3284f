package dev.iwarp.mpa;

/**
 * The peer closed the TCP connection after our Rev 2 Request without sending a Reply: it probably
 * speaks only RFC 5044 (mpa-rev2 §5). Retry with Rev 1 on a new TCP connection
 * ({@link MpaSettings#rev1Fallback()}). Error code 1, since the connection is gone.
 */
public final class MpaRevisionRefusedException extends MpaException {
    private static final long serialVersionUID = 1L;

    MpaRevisionRefusedException(String message) {
        super(MpaErrorCode.TCP_CONNECTION_LOST, message);
    }
}
