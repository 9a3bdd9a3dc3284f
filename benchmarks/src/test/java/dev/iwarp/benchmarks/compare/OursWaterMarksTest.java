package dev.iwarp.benchmarks.compare;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.Transport;
import io.netty.channel.Channel;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code compare --ours-water-marks}: our stack on its defaults unless asked for the raw writer's marks. */
@SuppressWarnings("try") // OursRun.close() waits for the event loops to stop, so it may be interrupted
class OursWaterMarksTest {
    private static final CompareCase WRITE_1M = new CompareCase(CompareCase.Op.WRITE, 1 << 20, true, Transport.NIO,
            CompareCase.TABLE_DEPTH);

    private static int[] highMarks(OursRun run) throws Exception {
        run.open();
        return new int[]{high(run.clientChannel), high(run.serverChannel)};
    }

    private static int high(Channel ch) throws Exception {
        return ch.eventLoop().submit(() -> ch.config().getWriteBufferHighWaterMark()).get(60, TimeUnit.SECONDS);
    }

    @Test
    void defaultsAreTheStacksAndRawGivesTheRawWritersMarks() throws Exception {
        try (OursRun run = new OursRun(WRITE_1M)) {
            int[] h = highMarks(run);
            assertEquals(IwarpStack.DEFAULT_WRITE_BUFFER_WATER_MARK.high(), h[0]);
            assertEquals(IwarpStack.DEFAULT_WRITE_BUFFER_WATER_MARK.high(), h[1]);
        }
        try (OursRun run = new OursRun(WRITE_1M, true)) {
            int[] h = highMarks(run);
            assertEquals(16 << 20, RawRun.waterMark(WRITE_1M).high());
            assertEquals(RawRun.waterMark(WRITE_1M).high(), h[0]);
            assertEquals(RawRun.waterMark(WRITE_1M).high(), h[1]);
        }
    }

    @Test
    void aBadValueAndTheProcessModeAreRefused() {
        StringWriter err = new StringWriter();
        java.io.PrintStream old = System.err;
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(buf, true));
        try {
            assertEquals(2, new CommandLine(new Compare()).setErr(new PrintWriter(err))
                    .execute("--ours-water-marks", "big"));
            assertEquals(2, new CommandLine(new Compare()).setErr(new PrintWriter(err))
                    .execute("--processes", "--ours-water-marks", "raw"));
        } finally {
            System.setErr(old);
        }
        String said = buf.toString();
        assertEquals(true, said.contains("--ours-water-marks must be default or raw: big"), said);
        assertEquals(true, said.contains("--ours-water-marks raw is for the one-JVM mode"), said);
    }
}
