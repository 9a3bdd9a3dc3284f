package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
import dev.iwarp.server.wire.IwarpWire;
import dev.iwarp.server.wire.SctpWire;
import dev.iwarp.server.wire.VitcpWire;
import dev.iwarp.vitcp.ViReliabilityLevel;
import dev.iwarp.vitcp.VitcpConfig;
import dev.iwarp.vitcp.VitcpCrcMode;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** {@code --wire}, the VI/TCP and the IFT options shared by serve, ping, demo and bench (a picocli mixin). */
final class WireOptions {
    /** The four wires. */
    enum Wire { iwarp, vitcp, ift, sctp }

    @Option(names = "--wire", description = "iwarp (MPA/DDP/RDMAP), vitcp (draft-dicecco-vitcp-01), ift "
            + "(DDP/RDMAP over IFT, draft-williams-iwarp-ift-01) or sctp (DDP/RDMAP over SCTP, "
            + "draft-stewart-otis-sctp-ddp-rdma-00) (default: ${DEFAULT-VALUE}).")
    Wire wire = Wire.iwarp;

    @Mixin
    IftOptions ift = new IftOptions();

    @Mixin
    SctpOptions sctp = new SctpOptions();

    @Option(names = "--reliability", paramLabel = "LEVEL",
            description = "VI/TCP reliability level: unreliable, reliable-delivery or reliable-reception; both ends must match (default: ${DEFAULT-VALUE}).")
    String reliability = "reliable-delivery";

    @Option(names = "--mtu", description = "VI/TCP MTU: largest payload per segment proposed, 1..65495 (default: ${DEFAULT-VALUE}).")
    @Range(min = 1, max = VitcpConfig.MAX_MTU)
    int mtu = 8192;

    @Option(names = "--crc-mode", paramLabel = "MODE",
            description = "VI/TCP CRC bit order when the CRC option is in use: ethernet-reflected or msb-first; both ends must agree (default: ${DEFAULT-VALUE}).")
    String crcMode = "ethernet-reflected";

    @Option(names = "--discriminator", description = "VI/TCP discriminator serve listens on (default: ${DEFAULT-VALUE}).")
    String discriminator = VitcpWire.DEFAULT_DISCRIMINATOR;

    boolean vitcp() {
        return wire == Wire.vitcp;
    }

    boolean ift() {
        return wire == Wire.ift;
    }

    boolean sctp() {
        return wire == Wire.sctp;
    }

    int defaultPort() {
        return vitcp() ? ServerConfig.DEFAULT_VITCP_PORT : ift() ? ServerConfig.DEFAULT_IFT_PORT
                : sctp() ? SctpWire.DEFAULT_PORT : ServerConfig.DEFAULT_PORT;
    }

    byte[] discriminatorOctets() {
        byte[] d = discriminator.getBytes(StandardCharsets.UTF_8);
        if (d.length > 64) {
            // draft-dicecco-vitcp-01 §3.3: a 64 byte field sets the maximum discriminator length
            throw new IllegalArgumentException("--discriminator is at most 64 octets: " + discriminator);
        }
        return d;
    }

    /** The VI/TCP attributes these options mean, with {@code crcOption} and {@code readWindow}. */
    VitcpConfig.Builder vitcpConfig(boolean crcOption, int readWindow) {
        return VitcpConfig.builder().reliabilityLevel(enumValue(ViReliabilityLevel.class, "--reliability", reliability))
                .mtu(mtu).crcOption(crcOption).crcMode(enumValue(VitcpCrcMode.class, "--crc-mode", crcMode))
                .rdmaReadWindow(readWindow);
    }

    /** Checks the IFT options (one-line {@link IllegalArgumentException}): valid, and given only with --wire ift. */
    void check() {
        ift.refuseUnlessIft(ift());
        if (ift()) {
            ift.settings(10_000);
        }
    }

    /** The client wire: iWARP (MPA or IFT) on {@code stack}, or VI/TCP to the discriminator. */
    ClientWire clientWire(IwarpStack stack) {
        return clientWire(stack, 1);
    }

    /** As above; a VI/TCP client gets {@code threads} event loop threads. */
    ClientWire clientWire(IwarpStack stack, int threads) {
        ift.refuseUnlessIft(ift());
        return vitcp() ? VitcpWire.client(vitcpConfig(false, 1).build(), discriminatorOctets(), threads)
                : ift() ? IwarpWire.client(stack, ift.framing(10_000, 1, 1))
                : sctp() ? SctpWire.client(stack, sctp.framing(true)) : IwarpWire.client(stack);
    }

    /**
     * The client wire of the tools with MPA Initiator options (ping, sendrecv): MPA with them (IRD = ORD = 1,
     * as rping), or VI/TCP or IFT, which refuse them.
     */
    ClientWire clientWire(IwarpStack stack, ClientMpaOptions mpa) {
        if (ift() || sctp()) {
            IftOptions.refuseMpaOptions(mpa);
            return clientWire(stack);
        }
        ift.refuseUnlessIft(false);
        return vitcp() ? mpa.checkVitcp(clientWire(null)) : IwarpWire.client(stack, mpa.settings(1, 1));
    }

    private static <E extends Enum<E>> E enumValue(Class<E> type, String option, String value) {
        try {
            return Enum.valueOf(type, value.trim().replace('-', '_').toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": unknown value " + value);
        }
    }
}
