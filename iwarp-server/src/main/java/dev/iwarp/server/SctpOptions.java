package dev.iwarp.server;

import dev.iwarp.bootstrap.SctpFraming;
import dev.iwarp.sctp.IndicationTransport;
import dev.iwarp.sctp.SctpIndication;
import dev.iwarp.sctp.SctpSettings;
import dev.iwarp.server.wire.SctpWire;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.util.Locale;

/** The {@code --wire sctp} options of serve, ping, demo and bench (a picocli mixin inside {@link WireOptions}). */
final class SctpOptions {
    @Option(names = "--sctp-indication", paramLabel = "HOW",
            description = "SCTP: how the Adaptation Layer Indication travels: native (INIT/INIT-ACK parameter 0xC006, "
                    + "Linux), hello (in-band first message) or static (nothing sent) (default: ${DEFAULT-VALUE}).")
    String indication = "native";

    @Option(names = "--sctp-local-indication", paramLabel = "VALUE",
            description = "SCTP: the indication we send, 0-5; 0 = none (plain SCTP, for tests) (default: ${DEFAULT-VALUE}).")
    int localIndication = SctpIndication.RDMA_AND_NEGOTIATION.value();

    @Option(names = "--sctp-max-chunk", paramLabel = "OCTETS",
            description = "SCTP: largest user data per message, extension included; MULPDU is 20 less (default: ${DEFAULT-VALUE}).")
    int maxChunk = SctpSettings.DEFAULT_MAX_CHUNK_USER_DATA;

    @Option(names = "--bind", paramLabel = "ADDRESS",
            description = "SCTP client: bind this one local address before connecting (the JDK otherwise binds all).")
    String bind;

    IndicationTransport transport() {
        try {
            return IndicationTransport.valueOf(indication.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--sctp-indication: unknown value " + indication);
        }
    }

    /** The framing these options mean; refuses (exit 2) where this machine cannot run SCTP. */
    SctpFraming framing(boolean client) {
        IndicationTransport t = transport();
        if (localIndication < 0 || localIndication > 5) {
            throw new IllegalArgumentException("--sctp-local-indication must be 0-5: " + localIndication);
        }
        String missing = SctpWire.unavailableReason(t);
        if (missing != null) {
            throw new IllegalArgumentException(missing);
        }
        SctpSettings.Builder b = SctpSettings.builder().transport(t).maxChunkUserData(maxChunk)
                .localIndication(localIndication == 0 ? null : SctpIndication.of(localIndication));
        if (t == IndicationTransport.STATIC) {
            b.staticPeer(SctpIndication.RDMA_AND_NEGOTIATION);
        }
        SctpFraming f = SctpFraming.of(b.build());
        return client && bind != null ? f.bindTo(new InetSocketAddress(bind, 0)) : f;
    }
}
