package dev.iwarp.server;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/**
 * {@code java -jar iwarp-server.jar [serve|ping|demo|bench|probe|sendrecv] ...}; without a subcommand it runs {@code serve}
 * on its defaults.
 */
@Command(name = "iwarp-server", mixinStandardHelpOptions = true, version = "iwarp-server 0.1.0",
        description = "iWARP (MPA/DDP/RDMAP) echo/target server and rping-compatible tools in pure Java.",
        subcommands = {ServeCommand.class, PingCommand.class, DemoCommand.class, BenchCommand.class,
                ProbeCommand.class, SendRecvCommand.class})
public final class Main {

    public static void main(String[] args) {
        int code = run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true));
        if (code != 0 || !isServe(args)) {
            System.exit(code);
        }
    }

    /** Runs the command line with output to {@code out} and errors to {@code err}; returns the exit code. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        return new CommandLine(new Main()).setOut(out).setErr(err)
                .setExecutionExceptionHandler((e, cl, parsed) -> {
                    // one clean line (bad option values, port in use...), no stack trace
                    cl.getErr().println(cl.getCommandName() + ": " + e.getMessage());
                    return e instanceof IllegalArgumentException ? 2 : 1;
                })
                .execute(withDefaultSubcommand(args));
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
        boolean topLevel = first.equals("-h") || first.equals("--help") || first.equals("-V") || first.equals("--version");
        if (first.startsWith("-") && !topLevel) {
            String[] a = new String[args.length + 1];
            a[0] = "serve";
            System.arraycopy(args, 0, a, 1, args.length);
            return a;
        }
        return args;
    }
}
