package dev.iwarp.examples;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs each example as a user would (their {@code run}; {@code main} only adds a fixed message and stdout). */
class ExamplesTest {
    @Test
    void rdmaWriteSendRead() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        String message = "placed by RDMA Write, octet for octet: \u00e9\u00e8";
        RdmaWriteSendReadExample.Outcome o = RdmaWriteSendReadExample.run(message,
                new PrintStream(printed, true, StandardCharsets.UTF_8));
        assertEquals(message, o.serverFoundInRegion(), "the Write landed before the Send was delivered");
        assertTrue(o.noteReceived().matches("wrote " + message.getBytes(StandardCharsets.UTF_8).length
                + " octets at TO 0x[0-9a-f]+"), o.noteReceived());
        assertEquals(RdmaWriteSendReadExample.GREETING, o.clientReadBack());
        String text = printed.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("client: connected; the server's region is STag 0x"), text);
        assertTrue(text.matches("(?s)server: listening on 127\\.0\\.0\\.1:\\d+, region .*"), text); // not /127.0.0.1
        assertTrue(text.endsWith("both: closed" + System.lineSeparator()), text);
    }

    @Test
    void mpaInYourOwnPipeline() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        assertEquals("hello over MPA", MpaPipelineExample.run("hello over MPA",
                new PrintStream(printed, true, StandardCharsets.UTF_8)));
        assertTrue(printed.toString(StandardCharsets.UTF_8).contains("client: MPA Reply Private Data \"welcome\""));
        assertTrue(printed.toString(StandardCharsets.UTF_8).matches("(?s)server: MPA Responder on 127\\.0\\.0\\.1:\\d+\\R.*"),
                printed.toString(StandardCharsets.UTF_8));
    }

    @Test
    void mainsRun() throws Exception {
        PrintStream stdout = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            RdmaWriteSendReadExample.main(new String[0]);
            MpaPipelineExample.main(new String[0]);
        } finally {
            System.setOut(stdout);
        }
        String text = printed.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("client: RDMA Read \"" + RdmaWriteSendReadExample.GREETING + "\""), text);
        assertTrue(text.contains("client: echo \"hello over MPA\""), text);
    }
}
