package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.Transport;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** The bench command line compare --processes runs for ours. */
class ProcessCompareCommandTest {
    private static ProcessCompare compare() {
        return new ProcessCompare(Path.of("serve.jar"), "stable", 5, 2, new PrintStream(new ByteArrayOutputStream()));
    }

    private static String after(List<String> cmd, String option) {
        return cmd.get(cmd.indexOf(option) + 1);
    }

    @Test
    void everyRequestSignaledByDefault() {
        List<String> cmd = compare().oursCommand(new CompareCase(CompareCase.Op.WRITE, 1024, true, Transport.EPOLL, 16),
                7000);
        assertFalse(cmd.contains("--cq-mod"), cmd::toString);
        assertEquals("write", after(cmd, "--op"));
        assertEquals("16", after(cmd, "--depth"));
    }

    @Test
    void cqModGoesToBenchAtMostTheDepth() {
        ProcessCompare pc = compare();
        pc.cqMod = 8;
        assertEquals("8", after(pc.oursCommand(new CompareCase(CompareCase.Op.WRITE, 1024, true, Transport.EPOLL, 16),
                7000), "--cq-mod"));
        assertEquals("4", after(pc.oursCommand(new CompareCase(CompareCase.Op.READ, 1024, true, Transport.EPOLL, 4),
                7000), "--cq-mod"));
    }
}
