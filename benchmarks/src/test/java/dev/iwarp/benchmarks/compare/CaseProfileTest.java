package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.Transport;
import jdk.jfr.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** CaseProfile: one side's measured window, recorded, with each thread group's CPU per message. */
class CaseProfileTest {
    @Test
    void oneSideIsRecordedAndItsLoopsCpuIsReportedPerMessage(@TempDir Path dir) throws Exception {
        CompareCase c = new CompareCase(CompareCase.Op.PIPELINE, 64, true, Transport.NIO, 64);
        String report = CaseProfile.profile(c, "ours", 0.3, 0.5,
                Configuration.getConfiguration("profile").getSettings(), dir);
        Path jfr = dir.resolve("pipeline-64-crc_nio-ours.jfr");
        assertTrue(Files.size(jfr) > 0, report);
        Matcher rate = Pattern.compile("^pipeline-64-crc/nio ours: (\\d+) messages/s", Pattern.MULTILINE).matcher(report);
        assertTrue(rate.find(), report);
        assertTrue(Long.parseLong(rate.group(1)) > 0, report);
        // the two loops are found by their Linux thread ids, so each has its own line
        for (String loop : List.of("client event loop", "server event loop")) {
            assertEquals(1, report.lines().filter(l -> l.startsWith("  " + loop)).count(), report);
        }
    }

    @Test
    void threadsAreGroupedByWhatTheJvmCallsThem() throws Exception {
        assertEquals("JIT compilers", CaseProfile.threadGroup("C2 CompilerThre"));
        assertEquals("JIT compilers", CaseProfile.threadGroup("C1 CompilerThre"));
        assertEquals("GC", CaseProfile.threadGroup("GC Thread#0"));
        assertEquals("GC", CaseProfile.threadGroup("G1 Conc#0"));
        assertEquals("other threads", CaseProfile.threadGroup("java"));
        // this thread is in /proc/self/task with its own ticks
        String self = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
        assertTrue(CaseProfile.threadTicks().keySet().stream().anyMatch(k -> k.startsWith(self + " ")));
    }
}
