package dev.iwarp.server;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Properties;

/**
 * {@code java -jar iwarp-server.jar [serve|ping|demo|bench|probe|sendrecv] ...}; without a subcommand it runs {@code serve}
 * on its defaults.
 */
@Command(name = "iwarp-server", versionProvider = Main.Version.class,
        description = "iWARP (MPA/DDP/RDMAP) echo/target server and rping-compatible tools in pure Java.",
        subcommands = {ServeCommand.class, PingCommand.class, DemoCommand.class, BenchCommand.class,
                ProbeCommand.class, SendRecvCommand.class,
                PerftestCommand.WriteBw.class, PerftestCommand.ReadBw.class, PerftestCommand.SendBw.class,
                PerftestCommand.WriteLat.class, PerftestCommand.ReadLat.class, PerftestCommand.SendLat.class,
                CommandLine.HelpCommand.class})
public final class Main {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Option(names = "--version", versionHelp = true, description = "Print the version and exit.")
    boolean version;

    public static void main(String[] args) {
        OutOfMemoryExit.install(); // never a half-dead server or tool after an OutOfMemoryError
        int code = run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true));
        if (code != 0 || !isServe(args)) {
            System.exit(code);
        }
    }

    /** Runs the command line with output to {@code out} and errors to {@code err}; returns the exit code. */
    @SuppressWarnings("try") // the tool's logging is restored when the command returns
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new Main());
        for (CommandLine sub : cl.getSubcommands().values()) {
            // --version is the top command's only; a subcommand's -V is its own (ping -V) or unknown
            for (OptionSpec o : new ArrayList<>(sub.getCommandSpec().options())) {
                if (o.versionHelp()) {
                    sub.getCommandSpec().remove(o);
                }
            }
        }
        HelpSections.install(cl);
        CommandLine.IExecutionStrategy runLast = new CommandLine.RunLast();
        return cl.setOut(out).setErr(err)
                .setExecutionStrategy(parsed -> {
                    CommandLineChecks.checkRanges(parsed);
                    ToolLogging logging = toolLogging(parsed);
                    if (logging == null) {
                        return runLast.execute(parsed);
                    }
                    try (ToolLogging.Restore restore = logging.apply()) {
                        return runLast.execute(parsed);
                    }
                })
                .setParameterExceptionHandler(CommandLineChecks::usageError)
                .setExecutionExceptionHandler((e, c, parsed) -> {
                    // one clean line (bad option values, port in use...), no stack trace
                    c.getErr().println(c.getCommandName() + ": " + e.getMessage());
                    return e instanceof IllegalArgumentException ? CommandLineChecks.EXIT_USAGE : 1;
                })
                .execute(withDefaultSubcommand(args));
    }

    /** The {@code --verbose} mixin of the client tool being run, or null (serve, demo, help). */
    private static ToolLogging toolLogging(CommandLine.ParseResult parsed) {
        for (CommandLine.ParseResult r = parsed; r != null; r = r.subcommand()) {
            for (CommandLine.Model.CommandSpec m : r.commandSpec().mixins().values()) {
                if (m.userObject() instanceof ToolLogging t) {
                    return t;
                }
            }
        }
        return null;
    }

    private static boolean isServe(String[] args) {
        String[] a = withDefaultSubcommand(args);
        return a.length > 0 && a[0].equals("serve");
    }

    /** No subcommand (nothing, or only options meant for serve) means {@code serve}. */
    static String[] withDefaultSubcommand(String[] args) {
        if (args.length == 0) {
            return new String[] {"serve"};
        }
        String first = args[0];
        boolean topLevel = first.equals("-h") || first.equals("--help") || first.equals("--version");
        if (first.startsWith("-") && !topLevel) {
            String[] a = new String[args.length + 1];
            a[0] = "serve";
            System.arraycopy(args, 0, a, 1, args.length);
            return a;
        }
        return args;
    }

    /** {@code --version}: the version the build wrote into {@code version.properties} (resource filtering). */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"iwarp-server " + version()};
        }

        static String version() {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
                if (in == null) {
                    return "(unknown version: built without its resources)";
                }
                p.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return p.getProperty("version", "(unknown version)");
        }
    }
}
