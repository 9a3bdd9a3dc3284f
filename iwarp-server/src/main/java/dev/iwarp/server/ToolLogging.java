package dev.iwarp.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

/**
 * {@code --verbose} of the client tools (a picocli mixin). A tool prints its result once, on its own output; the
 * library's log lines (the engine's warning about a Terminate the tool then reports itself, TLS details) stay off
 * unless {@code --verbose} asks for them at INFO. {@code serve} logs as it always did: the log is its output.
 */
final class ToolLogging {
    /**
     * Loggers of the library and of Netty under it (not the tool's own package, whose server side may share the
     * process, as in tests): the tool's own result lines do not go through a logger.
     */
    static final String[] LIBRARY = {"dev.iwarp.mpa", "dev.iwarp.ift", "dev.iwarp.sctp", "dev.iwarp.ddp",
            "dev.iwarp.rdmap", "dev.iwarp.verbs", "dev.iwarp.bootstrap", "dev.iwarp.vitcp", "io.netty"};

    @Option(names = "--verbose", description = "Also print the library's log lines (connection events, the "
            + "engine's warnings) at INFO; by default a tool prints only its result.")
    boolean verbose;

    /** Sets the library's log level for a tool's run; {@link Restore#close} puts back what was there. */
    Restore apply() {
        Level[] before = new Level[LIBRARY.length];
        for (int i = 0; i < LIBRARY.length; i++) {
            Logger l = (Logger) LoggerFactory.getLogger(LIBRARY[i]);
            before[i] = l.getLevel();
            l.setLevel(verbose ? Level.INFO : Level.OFF);
        }
        return () -> {
            for (int i = 0; i < LIBRARY.length; i++) {
                ((Logger) LoggerFactory.getLogger(LIBRARY[i])).setLevel(before[i]);
            }
        };
    }

    /** Undoes {@link #apply}. */
    interface Restore extends AutoCloseable {
        @Override
        void close();
    }
}
