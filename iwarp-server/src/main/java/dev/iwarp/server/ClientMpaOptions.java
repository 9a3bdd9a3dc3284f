package dev.iwarp.server;

import dev.iwarp.mpa.MpaSettings;
import dev.iwarp.mpa.RtrType;
import picocli.CommandLine.Option;

import java.util.List;

/**
 * The MPA Initiator options shared by the client subcommands ({@code ping}, {@code probe},
 * {@code sendrecv}). Defaults are what rping sends through siw: Rev 2, IRD 1, ORD 1, no CRC, no
 * markers, no peer-to-peer (rdma-core's rping.c).
 */
final class ClientMpaOptions {
    @Option(names = "--crc", description = "Ask for CRC: MPA C=1, or over VI/TCP the CRC option.")
    boolean crc;

    @Option(names = "--markers", description = "Ask for MPA markers (M=1); Linux siw rejects them.")
    boolean markers;

    @Option(names = "--mpa-rev", paramLabel = "REV", description = "MPA revision of the Request, 1 or 2 (default: ${DEFAULT-VALUE}).")
    @Range(min = 1, max = 2)
    int revision = 2;

    @Option(names = "--p2p", paramLabel = "RTR", split = ",", arity = "0..1", fallbackValue = "write,read",
            description = "Ask for RFC 6581 peer-to-peer, offering these RTR types (write, read, send; "
                    + "default when given without a value: write,read, as siw offers).")
    List<String> p2p;

    /**
     * Returns {@code vitcp} after checking that no MPA-only option was given: VI/TCP has no markers,
     * revisions or RTR (draft-dicecco-vitcp-01 §4); its CRC option is {@code --crc}.
     */
    <T> T checkVitcp(T vitcp) {
        if (markers || revision != 2 || p2p != null) {
            throw new IllegalArgumentException("--markers, --mpa-rev and --p2p are MPA options, not for --wire vitcp");
        }
        return vitcp;
    }

    MpaSettings settings(int ird, int ord) {
        if (revision != 1 && revision != 2) {
            throw new IllegalArgumentException("--mpa-rev must be 1 or 2: " + revision);
        }
        MpaSettings.Builder b = MpaSettings.builder().revision(revision).crc(crc).markers(markers).ird(ird).ord(ord);
        if (p2p != null) {
            if (revision != 2) {
                throw new IllegalArgumentException("--p2p needs MPA Rev 2 (RFC 6581)");
            }
            b.peerToPeer(true).rtrTypes(p2p.stream().map(ClientMpaOptions::rtrType).toArray(RtrType[]::new));
        }
        return b.build();
    }

    private static RtrType rtrType(String s) {
        try {
            return RtrType.valueOf(s.trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--p2p RTR type must be write, read or send: " + s);
        }
    }
}
