package dev.iwarp.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static dev.iwarp.server.ToolRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A file given on the command line that cannot be used is named with what is wrong with it, in one line
 * and exit 2, before anything starts: TLS certificates, keys and trust files, and serve's --pcap.
 */
class FileOptionErrorsTest {
    @TempDir
    Path dir;

    @Test
    void missingCertificateIsNamed() {
        ToolRun r = run("serve", "--tls", "--cert", "/nonexistent/cert.pem", "--key", "/nonexistent/key.pem",
                "--address", "127.0.0.1", "--port", "0");
        assertEquals(2, r.code());
        assertEquals("serve: --cert /nonexistent/cert.pem: no such file\n", r.err());
        assertEquals("", r.out());
    }

    @Test
    void trustDirectoryIsNamed() {
        ToolRun r = run("ping", "--tls", "--trust", dir.toString(), "127.0.0.1:1");
        assertEquals(2, r.code());
        assertEquals("ping: --trust " + dir + ": is a directory, not a file\n", r.err());
    }

    @Test
    void certificateThatIsNotPemIsNamedWithTheProblem() throws Exception {
        Path cert = Files.writeString(dir.resolve("cert.pem"), "not a certificate\n");
        Path key = Files.writeString(dir.resolve("key.pem"), "not a key\n");
        ToolRun r = run("serve", "--tls", "--cert", cert.toString(), "--key", key.toString(),
                "--address", "127.0.0.1", "--port", "0");
        assertEquals(2, r.code());
        String prefix = "serve: --cert " + cert + " with --key " + key + ": ";
        assertEquals(prefix, r.err().substring(0, Math.min(prefix.length(), r.err().length())), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @Test
    void unreadableTrustFileIsNamed() throws Exception {
        Path trust = Files.writeString(dir.resolve("trust.pem"), "garbage\n");
        ToolRun r = run("ping", "--tls", "--trust", trust.toString(), "127.0.0.1:1");
        assertEquals(2, r.code());
        String prefix = "ping: --trust " + trust + ": not usable (";
        assertEquals(prefix, r.err().substring(0, Math.min(prefix.length(), r.err().length())), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @Test
    void pcapThatCannotBeWrittenStopsServeAtStartInOneLine() {
        ToolRun r = run("serve", "--pcap", "/proc/version", "--address", "127.0.0.1", "--port", "0");
        assertEquals(2, r.code());
        // as root the kernel refuses the write (EIO); as anyone else, the open
        String asRoot = "serve: --pcap /proc/version: cannot write to it (Input/output error)\n";
        String asUser = "serve: --pcap /proc/version: cannot write to it (permission denied)\n";
        assertEquals(r.err().equals(asUser) ? asUser : asRoot, r.err());
    }

    @Test
    void aTakenMetricsPortIsNamed() throws Exception {
        // before: "serve: Address already in use", which did not say that the metrics port was the taken one
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            ToolRun r = run("serve", "--address", "127.0.0.1", "--port", "0", "--metrics-port",
                    Integer.toString(taken.getLocalPort()), "--no-jmx");
            assertEquals(1, r.code(), r.err());
            assertEquals("serve: --metrics-port " + taken.getLocalPort() + " is already in use on 127.0.0.1 (another "
                    + "serve's metrics? choose another port)\n", r.err());
        }
    }

    @Test
    void exposureWarningOnAllInterfacesWithoutAuthentication() {
        assertEquals("listening on all interfaces without authentication: any host that reaches this port can "
                + "connect and read and write its target region (--address 127.0.0.1 keeps it local; --tls with "
                + "--trust, --pin or --psk-file admits only known clients)",
                ServeCommand.exposureWarning("0.0.0.0", false));
        assertEquals(null, ServeCommand.exposureWarning("127.0.0.1", false));
        assertEquals(null, ServeCommand.exposureWarning("::1", false));
        assertEquals(null, ServeCommand.exposureWarning("0.0.0.0", true));
    }
}
