package dev.iwarp.server;

import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.net.BindException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The checks every subcommand shares, in one place: {@link Range} on numeric options, the one-line usage error
 * (exit 2), the pcap file's directory and a busy port. Commands declare ranges; they do not check them.
 */
final class CommandLineChecks {
    /** Exit code of every usage error (bad option or value), as picocli uses. */
    static final int EXIT_USAGE = 2;

    private CommandLineChecks() {
    }

    /** Checks the {@link Range} of every option given on the command line, in every (sub)command parsed. */
    static void checkRanges(ParseResult parsed) {
        for (ParseResult r = parsed; r != null; r = r.subcommand()) {
            for (ArgSpec arg : r.matchedArgs()) {
                if (arg.userObject() instanceof Field f && f.isAnnotationPresent(Range.class)) {
                    check(r.commandSpec().commandLine(), arg, f.getAnnotation(Range.class), arg.getValue());
                }
            }
        }
    }

    private static void check(CommandLine cl, ArgSpec arg, Range range, Object value) {
        if (!(value instanceof Number n)) {
            return; // an optional value left out
        }
        long max = range.max() != Long.MAX_VALUE ? range.max()
                : value instanceof Integer ? Integer.MAX_VALUE : Long.MAX_VALUE;
        boolean ok = value instanceof Double || value instanceof Float
                ? n.doubleValue() >= range.min() && n.doubleValue() <= max
                : n.longValue() >= range.min() && n.longValue() <= max;
        if (!ok) {
            String name = arg instanceof OptionSpec o ? o.longestName() : arg.paramLabel();
            String allowed = max == Integer.MAX_VALUE || max == Long.MAX_VALUE ? ">= " + range.min()
                    : "in " + range.min() + ".." + max;
            throw new ParameterException(cl, name + " must be " + allowed + ", not " + n, arg, String.valueOf(n));
        }
    }

    /** Prints a usage error as one line naming the command, then where help is; returns {@link #EXIT_USAGE}. */
    static int usageError(ParameterException e, String[] args) {
        CommandLine cl = e.getCommandLine();
        PrintWriter err = cl.getErr();
        if (e instanceof CommandLine.UnmatchedArgumentException && cl.getParent() == null && args.length > 0
                && !args[0].startsWith("-") && !cl.getSubcommands().containsKey(args[0])) {
            // a mistyped command: name it and the commands, not picocli's "Unmatched argument at index 0"
            err.println(cl.getCommandName() + ": unknown command '" + args[0] + "'; commands: "
                    + String.join(", ", cl.getSubcommands().keySet()) + " (see " + cl.getCommandName() + " --help)");
            return EXIT_USAGE;
        }
        err.println(cl.getCommandName() + ": " + e.getMessage() + " (see " + qualifiedName(cl) + " --help)");
        return EXIT_USAGE;
    }

    private static String qualifiedName(CommandLine cl) {
        return cl.getParent() == null ? cl.getCommandName()
                : qualifiedName(cl.getParent()) + " " + cl.getCommandName();
    }

    /** {@code file} when its directory exists; otherwise a usage error naming {@code option}. */
    static Path outputFile(String option, Path file) {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException(option + ": directory " + dir + " does not exist");
        }
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException(option + ": " + file + " is a directory, not a file");
        }
        return file;
    }

    /** True when {@code e} (or a cause) says the local address is taken. */
    static boolean isAddressInUse(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BindException
                    || t.getMessage() != null && t.getMessage().contains("Address already in use")) {
                return true;
            }
        }
        return false;
    }
}
