package dev.iwarp.rdmap.engine;

import dev.iwarp.verbs.Completion;
import dev.iwarp.verbs.SendRequest;

/**
 * A work request the {@link Requester} started: its outcome, once known, waits until every earlier
 * request's is, so completions leave in submission order (RFC 5040 §5.5). Each kind is one object that
 * carries what it needs: no separate promise or record per request.
 */
interface StartedRequest {
    /** The work request; null only for a Read RTR, which is never started. */
    SendRequest wr();

    /** The completion, once the outcome is known; null before. */
    Completion outcome();

    void outcome(Completion c);
}
