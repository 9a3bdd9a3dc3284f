package dev.iwarp.sctp;

import io.netty.channel.sctp.nio.NioSctpServerChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Netty's {@link NioSctpServerChannel} whose accepted associations are {@link ShimSctpChannel}s:
 * with {@link IndicationTransport#NATIVE} our indication is set on the listening socket before bind
 * (so the kernel puts it in every INIT-ACK) and each accepted association's peer indication is read
 * before the child is registered for reads (else the first
 * message could arrive before the peer's indication is known).
 */
public class ShimSctpServerChannel extends NioSctpServerChannel {
    private static final Logger LOG = LoggerFactory.getLogger(ShimSctpServerChannel.class);

    private final boolean nativeIndication;

    public ShimSctpServerChannel(SctpSettings settings) {
        this.nativeIndication = settings.transport() == IndicationTransport.NATIVE;
        if (nativeIndication) {
            SctpNative.prepare(javaChannel(), settings.localIndication() == null ? 0 : settings.localIndication().value());
        }
    }

    @Override
    protected int doReadMessages(List<Object> buf) throws Exception {
        com.sun.nio.sctp.SctpChannel ch = javaChannel().accept();
        if (ch == null) {
            return 0;
        }
        try {
            ShimSctpChannel.configure(ch);
            long peer = nativeIndication ? SctpNative.readPeerIndication(ch) : SctpShimChannel.NO_INDICATION;
            buf.add(new ShimSctpChannel(this, ch, nativeIndication, peer));
            return 1;
        } catch (Throwable t) {
            LOG.warn("failed to set up an accepted SCTP association: {}", t.toString());
            try {
                ch.close();
            } catch (Throwable t2) {
                LOG.debug("failed to close an accepted SCTP association", t2);
            }
            return 0;
        }
    }
}
