package dev.iwarp.sctp;

import com.sun.nio.sctp.SctpStandardSocketOptions;
import io.netty.channel.Channel;
import io.netty.channel.sctp.nio.NioSctpChannel;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketAddress;

/**
 * Netty's {@link NioSctpChannel} with what the shim needs that Netty's config cannot do: {@code SCTP_DISABLE_FRAGMENTS} on the JDK channel, the native indication (our value before
 * connect, the peer's read once connected and before the first receive) and a real abort.
 */
public class ShimSctpChannel extends NioSctpChannel implements SctpShimChannel {
    private final boolean nativeIndication;
    private volatile long peerIndication = NO_INDICATION;

    /** A client channel; with {@link IndicationTransport#NATIVE} our indication is set before connect. */
    public ShimSctpChannel(SctpSettings settings) {
        super(open(settings));
        this.nativeIndication = settings.transport() == IndicationTransport.NATIVE;
    }

    /** An accepted channel whose peer indication the server channel already read. */
    ShimSctpChannel(Channel parent, com.sun.nio.sctp.SctpChannel ch, boolean nativeIndication, long peerIndication) {
        super(parent, ch);
        this.nativeIndication = nativeIndication;
        this.peerIndication = peerIndication;
    }

    private static com.sun.nio.sctp.SctpChannel open(SctpSettings settings) {
        try {
            com.sun.nio.sctp.SctpChannel ch = com.sun.nio.sctp.SctpChannel.open();
            try {
                configure(ch);
                if (settings.transport() == IndicationTransport.NATIVE) {
                    SctpNative.prepare(ch, settings.localIndication() == null ? 0 : settings.localIndication().value());
                }
                return ch;
            } catch (RuntimeException | IOException e) {
                ch.close();
                throw e;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Options every shim association needs (the shim fragments; SCTP must not, so that one message is one chunk). */
    static void configure(com.sun.nio.sctp.SctpChannel ch) throws IOException {
        ch.setOption(SctpStandardSocketOptions.SCTP_DISABLE_FRAGMENTS, true);
        ch.setOption(SctpStandardSocketOptions.SCTP_NODELAY, true);
    }

    @Override
    protected boolean doConnect(SocketAddress remote, SocketAddress local) throws Exception {
        boolean connected = super.doConnect(remote, local);
        if (connected) {
            connected();
        }
        return connected;
    }

    @Override
    protected void doFinishConnect() throws Exception {
        super.doFinishConnect();
        connected();
    }

    private void connected() {
        if (nativeIndication) {
            peerIndication = SctpNative.readPeerIndication(javaChannel());
        }
    }

    @Override
    public long peerIndicationValue() {
        if (!nativeIndication) {
            throw new IllegalStateException("this channel does not read the indication natively");
        }
        return peerIndication;
    }

    @Override
    public void abort() {
        try {
            if (javaChannel().isOpen()) {
                javaChannel().setOption(SctpStandardSocketOptions.SO_LINGER, 0);
            }
        } catch (IOException | RuntimeException e) {
            // closing anyway; the stack sends SHUTDOWN instead of ABORT
        }
        close();
    }

}
