package dev.iwarp.server;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The doc test of what serve logs: a README block marked {@code <!-- doc-test: serve log, then: CLIENT; CLIENT -->}
 * is a {@code serve} command line and the lines serve prints. The test starts that serve as a process of its own
 * (the jar's {@code logback.xml}, so the lines are a user's), on port 0 of loopback; runs each CLIENT command
 * in-process against it ({@code 127.0.0.1} becomes serve's address, {@code FINGERPRINT} the certificate fingerprint
 * serve logged), each must exit 0; stops serve with SIGTERM, as Ctrl-C or {@code kill} would; and compares what serve
 * printed to stderr with the block, both sides normalised as {@link ReadmeSamplesTest#normalise} and {@link #normalise}.
 * With {@code <!-- doc-test: serve log, then the commands below -->} the clients are the commands of the next block
 * ({@code $ java -jar ... ARGS}, each followed by what it prints), and what each prints is compared too (the
 * fingerprint serve's sample log shows becomes serve's, another stays as written, a wrong pin; {@code localhost} or
 * {@code 127.0.0.1} becomes serve's address); such a command ends 0 unless its line ends {@code # exit N: why}.
 * Lines {@code $ echo TEXT > NAME; chmod 600 NAME} before serve's command make that file (a PSK) first; serve and
 * the clients run in the directory that holds it. Documents: {@link DocFiles}.
 */
class ReadmeServeLogTest {
    static final String MARK = "<!-- doc-test: serve log";
    private static final Pattern PROMPT = Pattern.compile("^\\$ java -jar (iwarp-server/target/)?iwarp-server\\.jar ");
    private static final Pattern LISTENING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern FINGERPRINT = Pattern.compile("SHA256:[0-9A-F]{2}(:[0-9A-F]{2}){31}");

    /** Masks what differs from run to run and machine to machine: times, memory figures, the fingerprint. */
    static String normalise(String line) {
        return ReadmeSamplesTest.normalise(line)
                .replaceAll("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ", "HH:MM:SS.mmm ")
                .replaceAll("memory budget [\\d.]+ [KMGT]iB \\(3/4 of the [\\d.]+ [KMGT]iB direct-memory limit\\); \\d+ ",
                        "memory budget N (3/4 of the N direct-memory limit); N ")
                .replaceAll(FINGERPRINT.pattern(), "SHA256:FINGERPRINT")
                // --log-format json: the time, the channel id and which event loop took the connection
                .replaceAll("^\\{\"timestamp\":\\d+,", "{\"timestamp\":T,").replaceAll("\"conn\":\"[0-9a-f]{8}\"", "\"conn\":\"ID\"")
                .replaceAll("(\"threadName\":\"multiThreadIoEventLoopGroup)-\\d+-\\d+\"", "$1-N-N\"")
                .replaceAll("memory budget [\\d.]+ [KMGT]iB \\(3\\\\/4 of the [\\d.]+ [KMGT]iB direct-memory limit\\); \\d+ ",
                        "memory budget N (3/4 of the N direct-memory limit); N ");
    }

    static final String BELOW = ", then the commands below";
    /** Only the blocks whose place contains this ({@code -Diwarp.test.serveLogBlock=README.md:164}), to repeat one. */
    private static final String ONLY = System.getProperty("iwarp.test.serveLogBlock", "");

    /**
     * A block: where it is, serve's command line, the files its {@code $ echo TEXT > NAME; chmod 600 NAME} lines make
     * first (NAME to TEXT), the clients with the exit code each must end with, serve's lines, the clients' lines,
     * and the certificate fingerprint the sample shows (null: none).
     */
    private record Block(String where, String serve, java.util.Map<String, String> files, List<String> clients,
                         List<Integer> exits, List<String> expected, List<List<String>> clientOutputs,
                         String sampleFingerprint) {
    }

    /** A line that makes a file before serve starts, as a user would: {@code $ echo TEXT > NAME; chmod 600 NAME}. */
    private static final Pattern SETUP = Pattern.compile("^\\$ echo (\\S+) > ([\\w.-]+); chmod 600 \\2$");
    /** A client's expected exit code other than 0, written at the end of its command line: {@code # exit 1: why}. */
    private static final Pattern EXIT = Pattern.compile("#\\s*exit (\\d+)");
    /**
     * A line serve may or may not print: whether a client's exit reaches serve as a FIN or a reset depends on whether
     * its last TLS record was read first (a race between the two processes), so the line is left out of what is compared.
     */
    private static final Pattern RESET = Pattern.compile(" connection lost: .*Connection reset by peer$");

    /** A client's output line as compared: {@link #normalise}, and serve's address as the client names it. */
    static String normaliseClient(String line) {
        return normalise(line).replaceAll("localhost \\(127\\.0\\.0\\.1\\):\\d+", "localhost (127.0.0.1):PORT");
    }

    private static List<Block> blocks(Path readme) throws Exception {
        List<String> lines = Files.readAllLines(readme);
        List<Block> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).trim();
            if (!l.startsWith(MARK)) {
                continue;
            }
            String rest = l.substring(MARK.length()).replace("-->", "").trim();
            List<String> clients = new ArrayList<>();
            if (rest.startsWith(", then:")) {
                for (String c : rest.substring(", then:".length()).split(";")) {
                    clients.add(c.trim());
                }
            }
            int j = i + 1;
            while (!lines.get(j).startsWith("```")) {
                j++;
            }
            java.util.Map<String, String> files = new java.util.LinkedHashMap<>();
            for (Matcher setup = SETUP.matcher(lines.get(j + 1)); setup.matches(); setup = SETUP.matcher(lines.get(j + 1))) {
                files.put(setup.group(2), setup.group(1));
                j++;
            }
            Matcher prompt = PROMPT.matcher(lines.get(j + 1));
            assertTrue(prompt.find(), readme + ":" + (j + 2) + " is not a serve command: " + lines.get(j + 1));
            String serve = lines.get(j + 1).substring(prompt.end());
            List<String> expected = new ArrayList<>();
            String sampleFingerprint = null;
            for (j += 2; !lines.get(j).startsWith("```"); j++) {
                Matcher fp = FINGERPRINT.matcher(lines.get(j));
                sampleFingerprint = sampleFingerprint == null && fp.find() ? fp.group() : sampleFingerprint;
                expected.add(normalise(lines.get(j)));
            }
            List<Integer> exits = new ArrayList<>(java.util.Collections.nCopies(clients.size(), 0));
            List<List<String>> outputs = new ArrayList<>();
            if (rest.equals(BELOW)) { // the next block: $ commands, each with what it prints
                for (j++; !lines.get(j).startsWith("```"); j++) {
                }
                for (j++; !lines.get(j).startsWith("```"); ) {
                    Matcher c = PROMPT.matcher(lines.get(j));
                    assertTrue(c.find(), readme + ":" + (j + 1) + " is not a command: " + lines.get(j));
                    clients.add(lines.get(j).substring(c.end()));
                    Matcher exit = EXIT.matcher(lines.get(j));
                    exits.add(exit.find() ? Integer.parseInt(exit.group(1)) : 0);
                    List<String> said = new ArrayList<>();
                    for (j++; !lines.get(j).startsWith("```") && !lines.get(j).startsWith("$ "); j++) {
                        said.add(normaliseClient(lines.get(j)));
                    }
                    outputs.add(said);
                }
            }
            out.add(new Block(readme + ":" + (i + 1), serve, files, clients, exits, expected, outputs, sampleFingerprint));
            i = j;
        }
        return out;
    }

    /** {@code args} with the value of {@code --port} (serve's) 0. */
    private static List<String> onPortZero(List<String> args) {
        List<String> a = new ArrayList<>(args);
        int p = a.indexOf("--port");
        if (p >= 0) {
            a.set(p + 1, "0");
        } else {
            a.addAll(List.of("--port", "0"));
        }
        return a;
    }

    private static List<String> serveLog(Block b) throws Exception {
        return serveLog(b, new ArrayList<>());
    }

    /** Runs the block's serve and clients; what each client printed is added to {@code clientOutputs}. */
    private static List<String> serveLog(Block b, List<List<String>> clientOutputs) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dlogback.configurationFile=" + Path.of("target", "classes", "logback.xml").toAbsolutePath(),
                "-cp", mainClassPath(), Main.class.getName()));
        List<String> serveArgs = onPortZero(ReadmeSamplesTest.args(b.serve()));
        // A client in a cold JVM on a loaded machine (load 25) has taken more than the 10 s default from its connect
        // to the end of its TLS handshake (serve logged "no TLS handshake within 10000 ms"), and more than the 2 s
        // first-octet default from its connect to its ClientHello. serve gives each this long; what it logs does not
        // depend on them.
        if (!serveArgs.contains("--startup-timeout")) {
            serveArgs.addAll(List.of("--startup-timeout", "60000"));
        }
        if (!serveArgs.contains("--first-octet-timeout")) {
            serveArgs.addAll(List.of("--first-octet-timeout", "60000"));
        }
        command.addAll(serveArgs);
        Path err = Files.createTempFile("serve-log", ".txt");
        Path out = Files.createTempFile("serve-out", ".txt");
        Path dir = Files.createTempDirectory("serve-dir"); // where the block's files are made and the commands run
        for (java.util.Map.Entry<String, String> f : b.files().entrySet()) {
            Path file = Files.writeString(dir.resolve(f.getKey()), f.getValue() + "\n");
            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        }
        Process serve = new ProcessBuilder(command).directory(dir.toFile()).redirectError(err.toFile())
                .redirectOutput(out.toFile()).start();
        try {
            Matcher listening = null;
            // a cold serve making its TLS certificate took more than a minute to listen at load 34
            for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(180); System.nanoTime() < end; Thread.sleep(50)) {
                Matcher m = LISTENING.matcher(Files.readString(err));
                if (m.find()) {
                    listening = m;
                    break;
                }
                assertTrue(serve.isAlive(), () -> b.where() + " serve exited: " + read(err));
            }
            assertTrue(listening != null, () -> b.where() + " serve did not listen: " + read(err) + read(out) + command);
            Matcher fp = FINGERPRINT.matcher(Files.readString(err));
            String fingerprint = fp.find() ? fp.group() : "FINGERPRINT";
            for (int k = 0; k < b.clients().size(); k++) {
                List<String> args = new ArrayList<>();
                for (String a : ReadmeSamplesTest.args(b.clients().get(k))) {
                    args.add(a.matches("(127\\.0\\.0\\.1|localhost)(:\\d+)?")
                            ? a.replaceAll(":\\d+$", "") + ":" + listening.group(1)
                            : a.equals("FINGERPRINT") || a.equals(b.sampleFingerprint()) ? fingerprint : a);
                }
                if (!args.contains("--timeout") && List.of("ping", "probe", "bench", "sendrecv").contains(args.get(0))) {
                    // a cold JVM's first TLS handshake on a loaded CI machine can outlast the 10 s default; what
                    // the command prints does not depend on it
                    args.addAll(List.of("--timeout", "60000"));
                }
                // a process of its own, as a user runs it (a bench inside the test JVM has stalled with no
                // completion in 10 s while the same bench from its own process passes)
                List<String> process = new ArrayList<>(command.subList(0, command.indexOf(Main.class.getName()) + 1));
                process.addAll(args);
                Process p = new ProcessBuilder(process).directory(dir.toFile()).redirectErrorStream(true).start();
                String said = new String(p.getInputStream().readAllBytes());
                assertTrue(p.waitFor(120, TimeUnit.SECONDS), b.where() + " client " + args + " did not end: " + said);
                assertEquals(b.exits().get(k), p.exitValue(), b.where() + " client " + args + ": " + said
                        + "\nserve's log: " + read(err));
                clientOutputs.add(said.lines().map(ReadmeServeLogTest::normaliseClient).toList());
            }
            // the last session's close line follows its client's exit, by more than any fixed wait on a loaded machine
            long closes = b.expected().stream().filter(l -> l.contains(" closed: ")).count();
            for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                 System.nanoTime() < end && read(err).lines().filter(l -> l.contains(" closed: ")).count() < closes; ) {
                Thread.sleep(50);
            }
        } finally {
            serve.destroy(); // SIGTERM
            if (!serve.waitFor(30, TimeUnit.SECONDS)) {
                serve.destroyForcibly();
            }
        }
        List<String> got = new ArrayList<>();
        read(err).lines().filter(l -> !RESET.matcher(l).find()).map(ReadmeServeLogTest::normalise).forEach(got::add);
        Files.deleteIfExists(err);
        Files.deleteIfExists(out);
        for (String f : b.files().keySet()) {
            Files.deleteIfExists(dir.resolve(f));
        }
        Files.deleteIfExists(dir);
        return got;
    }

    /** The test's class path without the test classes and the testkit (its logback configurator keeps logs back). */
    static String mainClassPath() {
        return java.util.Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
                .filter(e -> !e.contains("test-classes") && !e.contains("iwarp-testkit") && !e.contains("junit")
                        && !e.contains("jazzer"))
                .map(e -> Path.of(e).toAbsolutePath().toString()) // the commands may run in another directory
                .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    @Test
    void markedServeLogsAreWhatServePrints() throws Exception {
        List<Block> all = new ArrayList<>();
        for (Path doc : DocFiles.all()) {
            all.addAll(blocks(doc));
        }
        assertTrue(all.size() >= 2, "marked serve logs found: " + all.size());
        for (Block b : all) {
            if (!b.where().contains(ONLY)) {
                continue;
            }
            List<List<String>> said = new ArrayList<>();
            assertEquals(closesSorted(b.expected()), closesSorted(serveLog(b, said)), b.where() + " " + b.serve());
            if (!b.clientOutputs().isEmpty()) {
                assertEquals(b.clientOutputs(), said, b.where() + " the clients' output below it");
            }
        }
    }

    /**
     * The log with each run of adjacent "closed:" lines sorted: two connections that end together (a client's two
     * connections, closed at its exit) are closed on two event loops, in either order.
     */
    static List<String> closesSorted(List<String> log) {
        List<String> out = new ArrayList<>(log);
        for (int i = 0; i < out.size(); ) {
            int j = i;
            while (j < out.size() && out.get(j).contains(" closed: ")) {
                j++;
            }
            if (j > i + 1) {
                java.util.Collections.sort(out.subList(i, j));
            }
            i = Math.max(j, i + 1);
        }
        return out;
    }

    @Test
    void adjacentClosesCompareInEitherOrder() {
        List<String> a = List.of("x accepted", "a closed: 1", "b closed: 2", "y");
        List<String> b = List.of("x accepted", "b closed: 2", "a closed: 1", "y");
        assertEquals(closesSorted(a), closesSorted(b));
        assertNotEquals(closesSorted(List.of("a closed: 1", "y", "b closed: 2")),
                closesSorted(List.of("b closed: 2", "y", "a closed: 1")));
    }

    @Test
    void theNormalisation() {
        assertEquals("HH:MM:SS.mmm INFO  ServeCommand - memory budget N (3/4 of the N direct-memory limit); N connections",
                normalise("14:19:00.723 INFO  ServeCommand - memory budget 4.4 GiB (3/4 of the 5.9 GiB direct-memory "
                        + "limit); 33907 connections"));
        assertEquals("pin SHA256:FINGERPRINT)", normalise("pin SHA256:68:94:1C:F8:97:DA:7E:4C:86:6D:BD:9D:D5:11:1F:D6:B2:EE"
                + ":A4:FB:7F:25:2E:37:5A:AB:F3:17:77:6C:51:D0)"));
    }
}
