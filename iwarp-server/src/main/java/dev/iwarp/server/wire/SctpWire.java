package dev.iwarp.server.wire;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.ListenOptions;
import dev.iwarp.bootstrap.SctpFraming;
import dev.iwarp.sctp.IndicationTransport;
import dev.iwarp.sctp.SctpNative;

import java.io.IOException;

/**
 * DDP and RDMAP over SCTP (the SCTP DDP/RDMA adaptation, {@link SctpFraming}) as a wire: {@link IwarpWire}'s
 * listening and connecting sides with {@link WireFraming#SCTP}, SCTP associations instead of MPA over TCP. The
 * adaptation carries no private data, so serve's setup data (its target advertisement) is its first Send, as over
 * IFT ({@link SetupMessage}). Here: its default port and whether this machine can run it.
 */
public final class SctpWire {
    /** serve's default SCTP port (next to MPA's 7174 and VI/TCP's 7175). */
    public static final int DEFAULT_PORT = 7177;

    private SctpWire() {
    }

    /**
     * {@code null} when this machine can run the SCTP wire with {@code transport}, else one line
     * saying what is missing: libsctp.so.1, the kernel's SCTP, or native access for the indication.
     */
    public static String unavailableReason(IndicationTransport transport) {
        com.sun.nio.sctp.SctpChannel ch;
        try {
            ch = com.sun.nio.sctp.SctpChannel.open();
        } catch (UnsupportedOperationException e) {
            return "no SCTP here: the JDK cannot load libsctp.so.1 (install lksctp-tools): " + e.getMessage();
        } catch (IOException e) {
            return "no SCTP here: the kernel refuses SCTP sockets (load the sctp kernel module): " + e.getMessage();
        } catch (Throwable e) {
            return "no SCTP here: " + e;
        }
        try (com.sun.nio.sctp.SctpChannel c = ch) {
            if (transport == IndicationTransport.NATIVE) {
                if (SctpNative.unavailableReason() != null) {
                    return SctpNative.unavailableReason() + " (or choose --sctp-indication hello or static)";
                }
                SctpNative.prepare(c, 0);
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getMessage();
        }
    }

    /** serve's listening side over SCTP on {@code stack}. */
    public static ServerWire server(IwarpStack stack, SctpFraming framing, boolean ownsStack) {
        return IwarpWire.server(stack, ListenOptions.of(framing), ownsStack);
    }

    /** The client side over SCTP on {@code stack} (not closed by the wire). */
    public static ClientWire client(IwarpStack stack, SctpFraming framing) {
        return new IwarpClientWire(stack, WireFraming.SCTP, framing, null);
    }
}
