package dev.iwarp.server;

import java.io.PrintWriter;
import java.io.StringWriter;

/** What one in-process {@link Main#run} of the tool printed and returned, as a user's shell would see it. */
record ToolRun(int code, String out, String err) {

    /** Runs the tool with {@code args}, capturing standard output and standard error. */
    static ToolRun run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new ToolRun(code, out.toString(), err.toString());
    }
}
