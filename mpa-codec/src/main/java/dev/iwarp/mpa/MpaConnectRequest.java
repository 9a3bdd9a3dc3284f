package dev.iwarp.mpa;

import io.netty.channel.Channel;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * User event fired by a Responder's {@link MpaStartupHandler} when a valid MPA Request arrived: the
 * application inspects it and calls {@link #accept} or {@link #reject} exactly once, from any thread,
 * now or later (RFC 5044 §7.1.2 rules 2 and 6). Until then the Reply is not sent; the startup
 * timeout keeps running.
 */
public final class MpaConnectRequest {
    private final MpaStartupHandler handler;
    private final Channel channel;
    private final MpaStartupFrame request;
    private final AtomicBoolean decided = new AtomicBoolean();

    MpaConnectRequest(MpaStartupHandler handler, Channel channel, MpaStartupFrame request) {
        this.handler = handler;
        this.channel = channel;
        this.request = request;
    }

    /** The channel the Request arrived on. */
    public Channel channel() {
        return channel;
    }

    /** The validated Request frame. */
    public MpaStartupFrame request() {
        return request;
    }

    /** The Initiator's ULP Private Data (after any IRD/ORD words). A copy. */
    public byte[] privateData() {
        return request.ulpPrivateData();
    }

    /** Accepts with no reply Private Data and the configured IRD/ORD. */
    public void accept() {
        accept(new byte[0]);
    }

    /** Accepts with reply Private Data and the configured IRD/ORD. */
    public void accept(byte[] replyPrivateData) {
        accept(replyPrivateData, -1, -1);
    }

    /**
     * Accepts with reply Private Data and this connection's IRD and ORD (-1: the configured value).
     *
     * @throws IllegalArgumentException when the Private Data does not fit (512 octets with the IRD/ORD words)
     * @throws IllegalStateException when already accepted or rejected
     */
    public void accept(byte[] replyPrivateData, int ird, int ord) {
        byte[] pd = checkPrivateData(replyPrivateData);
        if (ird > MpaIrdOrd.MAX_VALUE || ord > MpaIrdOrd.MAX_VALUE) {
            throw new IllegalArgumentException("IRD/ORD are 14-bit values: " + ird + "/" + ord);
        }
        decide();
        handler.decide(this, false, pd, ird, ord);
    }

    /**
     * Rejects: a Reply with R=1 and this Private Data is sent, MPA exits and the TCP connection stays
     * open for the application (RFC 5044 §7.1.2 rule 2).
     */
    public void reject(byte[] replyPrivateData) {
        byte[] pd = checkPrivateData(replyPrivateData);
        decide();
        handler.decide(this, true, pd, -1, -1);
    }

    private byte[] checkPrivateData(byte[] pd) {
        byte[] copy = pd == null ? new byte[0] : pd.clone();
        int words = request.irdOrd() != null ? MpaIrdOrd.LENGTH : 0;
        if (copy.length + words > MpaStartupFrame.MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("reply Private Data of " + copy.length + " octets (+" + words
                    + " IRD/ORD) exceeds 512 (RFC 5044 §7.1.1)");
        }
        return copy;
    }

    private void decide() {
        if (!decided.compareAndSet(false, true)) {
            throw new IllegalStateException("this MPA Request was already accepted or rejected");
        }
    }

    @Override
    public String toString() {
        return "MpaConnectRequest(" + channel + ", " + request + ")";
    }
}
