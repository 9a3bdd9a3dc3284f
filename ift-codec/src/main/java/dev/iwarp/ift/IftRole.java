package dev.iwarp.ift;

/**
 * The two roles of the adaption (IFT draft §4.2 PH). The draft does not say who is which; by default
 * node A is the TCP active opener (see {@link IftSettings#role()}); after a ULP upgrade the ULP says.
 */
public enum IftRole {
    /** Sends phase 0, validates node B's phase 1, then frames. */
    NODE_A,
    /** Validates phase 0, answers with phase 1, then frames. */
    NODE_B;

    /** The phase of the indication this role sends. */
    public int sendsPhase() {
        return this == NODE_A ? 0 : 1;
    }

    /** The phase of the indication this role expects from the peer. */
    public int expectsPhase() {
        return this == NODE_A ? 1 : 0;
    }
}
