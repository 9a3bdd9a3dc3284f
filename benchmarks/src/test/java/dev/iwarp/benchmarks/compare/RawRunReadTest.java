package dev.iwarp.benchmarks.compare;

import dev.iwarp.benchmarks.compare.process.RawRead;
import dev.iwarp.bootstrap.Transport;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** compare's one-JVM raw Read program: request/response by default, the old stream with {@code --raw-read stream}. */
@SuppressWarnings("try") // RawRun.close() waits for the event loops to stop, so it may be interrupted
class RawRunReadTest {
    private static final CompareCase READ = new CompareCase(CompareCase.Op.READ, 65536, false, Transport.NIO,
            CompareCase.TABLE_DEPTH);
    private static final CompareCase WRITE = new CompareCase(CompareCase.Op.WRITE, 65536, false, Transport.NIO,
            CompareCase.TABLE_DEPTH);

    private static List<String> handlers(Channel ch) throws Exception {
        return ch.eventLoop().submit(() -> {
            List<String> out = new ArrayList<>();
            for (Map.Entry<String, ChannelHandler> e : ch.pipeline()) {
                out.add(e.getValue().getClass().getSimpleName());
            }
            return out;
        }).get(60, TimeUnit.SECONDS);
    }

    /** Runs until {@code n} messages completed (a generous bound); returns the handlers of {client, server}. */
    private static List<List<String>> runUntil(RawRun run, long n) throws Exception {
        run.open();
        List<List<String>> pipelines = List.of(handlers(run.client()), handlers(run.server()));
        run.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (run.messages() < n && run.failure == null && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(null, run.failure);
        assertTrue(run.messages() >= n, "messages " + run.messages());
        return pipelines;
    }

    @Test
    void streamIsTheOldProgramTheWriteProgram() throws Exception {
        // before request/response, a Read case ran exactly the Write case's program: bulk writes to a sink
        List<List<String>> write;
        try (RawRun run = new RawRun(WRITE)) {
            write = runUntil(run, 20);
        }
        try (RawRun run = new RawRun(READ, RawRead.Mode.STREAM)) {
            List<List<String>> read = runUntil(run, 20);
            assertEquals(write, read);
            assertEquals(List.of(List.of("ClientHandler"), List.of("ServerHandler")), read);
        }
    }

    @Test
    void requestResponseIsTheDefault() throws Exception {
        try (RawRun run = new RawRun(READ)) {
            List<List<String>> read = runUntil(run, 20);
            assertEquals(List.of(List.of("Requester", "Failures"), List.of("Responder", "Failures")), read);
        }
    }

    @Test
    void requestResponseAtOrd128OfOneKibMessages() throws Exception {
        CompareCase c = new CompareCase(CompareCase.Op.READ, 1024, true, Transport.NIO, CompareCase.PERFTEST_DEPTH);
        try (RawRun run = new RawRun(c, RawRead.Mode.REQUEST_RESPONSE)) {
            runUntil(run, 1000);
        }
    }

    @Test
    void theReportNamesTheBaseline() {
        Compare o = new Compare();
        assertEquals("{\"rawRead\":\"request-response\",\"rounds\":1}", o.withRawRead("{\"rounds\":1}"));
        assertTrue(o.rawReadLine().startsWith("raw Read baseline: request-response"));
        o.rawReadMode = RawRead.Mode.STREAM;
        assertEquals("{\"rawRead\":\"stream\",\"rounds\":1}", o.withRawRead("{\"rounds\":1}"));
        assertTrue(o.rawReadLine().startsWith("raw Read baseline: stream"));
    }
}
