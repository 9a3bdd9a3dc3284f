package dev.iwarp.server;

import picocli.CommandLine.Option;

/**
 * {@code -h}/{@code --help} for a subcommand (a picocli mixin). Subcommands do not take picocli's standard
 * {@code -V}/{@code --version}: {@code --version} belongs to the top command, and {@code -V} is rping's
 * "validate the ping data" ({@code ping -V}).
 */
final class HelpOption {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;
}
