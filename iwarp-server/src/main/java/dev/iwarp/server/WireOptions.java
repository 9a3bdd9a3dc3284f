package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.server.wire.ClientWire;
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

    /** The strategy of the chosen wire: the one place the tools learn what a wire needs. */
    ToolWire tool() {
        return switch (wire) {
            case iwarp -> new MpaToolWire(this);
            case vitcp -> new VitcpToolWire(this);
            case ift -> new IftToolWire(this);
            case sctp -> new SctpToolWire(this);
        };
    }

    int defaultPort() {
        return tool().defaultPort();
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

    /** Checks the wire's own options (one-line {@link IllegalArgumentException}), refusing another wire's. */
    void check() {
        tool().check();
    }

    /** The client wire on {@code stack} (null for VI/TCP), one event loop thread. */
    ClientWire clientWire(IwarpStack stack) {
        return tool().clientWire(stack, 1);
    }

    /** As above; a VI/TCP client gets {@code threads} event loop threads. */
    ClientWire clientWire(IwarpStack stack, int threads) {
        return tool().clientWire(stack, threads);
    }

    /**
     * The client wire of the tools with MPA Initiator options (ping, sendrecv): MPA with them (IRD = ORD = 1,
     * as rping); the other wires refuse them.
     */
    ClientWire clientWire(IwarpStack stack, ClientMpaOptions mpa) {
        return tool().clientWire(stack, mpa);
    }

    private static <E extends Enum<E>> E enumValue(Class<E> type, String option, String value) {
        try {
            return Enum.valueOf(type, value.trim().replace('-', '_').toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": unknown value " + value);
        }
    }
}
