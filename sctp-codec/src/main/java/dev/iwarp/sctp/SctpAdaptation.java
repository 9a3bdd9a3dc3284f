package dev.iwarp.sctp;

/**
 * The outcome of the indication exchange on one association (draft §3.1): what each side indicated
 * and how the values travelled. Each direction follows its sender's value. Immutable.
 */
public final class SctpAdaptation {
    private final SctpIndication local;
    private final SctpIndication peer;
    private final IndicationTransport transport;

    public SctpAdaptation(SctpIndication local, SctpIndication peer, IndicationTransport transport) {
        this.local = local;
        this.peer = peer;
        this.transport = transport;
    }

    /** What we indicated, or {@code null}. */
    public SctpIndication local() {
        return local;
    }

    /** What the peer indicated (a value 1-5), or {@code null} for none or any other value. */
    public SctpIndication peer() {
        return peer;
    }

    public IndicationTransport transport() {
        return transport;
    }

    /**
     * Whether the adaptation runs: only when both sides indicated a value 1-5 (draft §3.1 rules 3
     * and 4; a value outside 1-5 counts as no indication, our reading); otherwise the association is plain SCTP and no extension is sent.
     */
    public boolean enabled() {
        return local != null && peer != null;
    }

    @Override
    public String toString() {
        return "local " + (local == null ? "none" : local) + ", peer " + (peer == null ? "none" : peer) + " ("
                + transport + "): adaptation " + (enabled() ? "enabled" : "disabled");
    }
}
