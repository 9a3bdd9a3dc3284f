package dev.iwarp.server;

import dev.iwarp.bootstrap.IwarpStack;
import dev.iwarp.bootstrap.tls.TlsCertificates;
import dev.iwarp.bootstrap.tls.TlsPsk;
import dev.iwarp.bootstrap.tls.TlsSettings;
import dev.iwarp.server.wire.ClientWire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;

/**
 * {@code --tls} and its options for serve, ping, bench and demo (a picocli mixin): iWARP inside TLS
 * 1.3 (Bouncy Castle), MPA's startup inside the encrypted stream. Secrets come from files or the
 * environment, never from the command line.
 */
final class TlsOptions {
    private static final Logger LOG = LoggerFactory.getLogger(TlsOptions.class);
    /** The environment variable holding a PKCS#12 keystore's password. */
    static final String P12_PASSWORD_VARIABLE = "IWARP_TLS_P12_PASSWORD";

    @Option(names = "--tls", description = "Run MPA inside TLS 1.3. serve with no --cert/--key/--psk-file makes a "
            + "self-signed certificate and logs its SHA-256 fingerprint for ping --pin.")
    boolean tls;

    @Option(names = "--cert", paramLabel = "FILE", description = "Our certificate chain: PEM (with --key), or a "
            + "PKCS#12 keystore (.p12/.pfx, key included; password from " + P12_PASSWORD_VARIABLE + ").")
    Path cert;

    @Option(names = "--key", paramLabel = "FILE", description = "Our private key (PEM: PKCS#8, PKCS#1 or SEC 1, unencrypted).")
    Path key;

    @Option(names = "--trust", paramLabel = "FILE", description = "Trust these certificates (PEM, or PKCS#12) for the "
            + "peer's chain. With serve: require client certificates issued by them.")
    Path trust;

    @Option(names = "--pin", paramLabel = "SHA256:..", description = "Accept only the peer certificate with this "
            + "SHA-256 fingerprint (as serve --tls logs it; no CA or host name check). With serve: require it of clients.")
    String pin;

    @Option(names = "--psk-file", paramLabel = "FILE", description = "TLS 1.3 external PSK instead of certificates: "
            + "a file whose line is IDENTITY:HEXKEY (16 octets or more).")
    Path pskFile;

    @Option(names = "--psk-env", paramLabel = "VAR", description = "As --psk-file, from this environment variable "
            + "(e.g. " + TlsPsk.ENVIRONMENT_VARIABLE + ").")
    String pskEnv;

    @Option(names = "--tls-name", paramLabel = "NAME", description = "Client: the name the server's certificate "
            + "must carry (default: the host connected to).")
    String serverName;

    boolean enabled() {
        return tls;
    }

    /** True when serve admits only clients that prove who they are: a client certificate or pin, or a PSK. */
    boolean authenticatesClients() {
        return tls && (trust != null || pin != null || pskFile != null || pskEnv != null);
    }

    /** The options make sense together, and only with --tls on the iWARP wire; else IllegalArgumentException. */
    void check(boolean vitcp) {
        boolean any = cert != null || key != null || trust != null || pin != null || pskFile != null || pskEnv != null
                || serverName != null;
        if (!tls && any) {
            throw new IllegalArgumentException("--cert, --key, --trust, --pin, --psk-file, --psk-env and --tls-name need --tls");
        }
        if (tls && vitcp) {
            throw new IllegalArgumentException("--tls is for --wire iwarp (MPA); the tools run VI/TCP, IFT and SCTP without TLS");
        }
        if (pskFile != null && pskEnv != null) {
            throw new IllegalArgumentException("--psk-file or --psk-env, not both");
        }
        if ((pskFile != null || pskEnv != null) && (cert != null || key != null || trust != null || pin != null)) {
            throw new IllegalArgumentException("a PSK replaces certificates: no --cert, --key, --trust or --pin with it");
        }
        if (key != null && cert == null) {
            throw new IllegalArgumentException("--key needs --cert");
        }
        if (cert != null && key == null && !isPkcs12(cert)) {
            throw new IllegalArgumentException("--cert " + cert + " is PEM: give its --key too (or a .p12 keystore)");
        }
        if (pin != null) {
            TlsCertificates.parseFingerprint(pin); // the format error, now
        }
        readableFile("--cert", cert);
        readableFile("--key", key);
        readableFile("--trust", trust);
        readableFile("--psk-file", pskFile);
    }

    /** A file option names its file and what is wrong with it: missing, a directory, or unreadable. */
    static void readableFile(String option, Path file) {
        if (file == null) {
            return;
        }
        if (!Files.exists(file)) {
            throw new IllegalArgumentException(option + " " + file + ": no such file");
        }
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException(option + " " + file + ": is a directory, not a file");
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException(option + " " + file + ": not readable (permission denied)");
        }
    }

    /** Reads one file option; a failure names the option, the file and the problem. */
    private static void load(String option, Path file, FileLoad load) {
        try {
            load.run();
        } catch (IOException e) {
            throw new IllegalArgumentException(option + " " + file + ": cannot be read ("
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()) + ")", e);
        } catch (GeneralSecurityException | RuntimeException e) {
            if (e instanceof IllegalArgumentException && e.getMessage() != null && e.getMessage().startsWith(option)) {
                throw (IllegalArgumentException) e;
            }
            throw new IllegalArgumentException(option + " " + file + ": not usable ("
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()) + ")", e);
        }
    }

    private interface FileLoad {
        void run() throws IOException, GeneralSecurityException;
    }

    private static boolean isPkcs12(Path p) {
        String n = p.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        return n.endsWith(".p12") || n.endsWith(".pfx");
    }

    private static char[] p12Password() {
        String v = System.getenv(P12_PASSWORD_VARIABLE);
        return v == null ? new char[0] : v.toCharArray();
    }

    private TlsPsk psk() throws IOException {
        if (pskFile != null) {
            readableFile("--psk-file", pskFile);
            return TlsPsk.fromFile(pskFile);
        }
        String v = System.getenv(pskEnv);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("--psk-env " + pskEnv + ": the variable is not set");
        }
        try {
            return TlsPsk.parse(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--psk-env " + pskEnv + ": " + e.getMessage());
        }
    }

    private TlsSettings.Builder common() throws IOException, GeneralSecurityException {
        TlsSettings.Builder b = TlsSettings.builder();
        if (pskFile != null || pskEnv != null) {
            return b.psk(psk());
        }
        if (cert != null) {
            if (isPkcs12(cert)) {
                load("--cert", cert, () -> b.identityPkcs12(cert, p12Password()));
            } else {
                load("--cert " + cert + " with --key", key, () -> b.identityPem(key, cert));
            }
        }
        if (trust != null) {
            load("--trust", trust, () -> b.trust(trust, p12Password()));
        }
        if (pin != null) {
            b.pin(pin);
        }
        return b;
    }

    /**
     * serve's settings after {@link #check}, or null without --tls; a self-signed certificate when
     * given none. Unreadable or unusable files: IllegalArgumentException naming them.
     */
    TlsSettings server(boolean vitcp) {
        return server(vitcp, TlsSettings.DEFAULT_HANDSHAKE_TIMEOUT_MILLIS);
    }

    /** As {@link #server(boolean)}, the handshake given {@code handshakeTimeoutMs} to complete. */
    TlsSettings server(boolean vitcp, long handshakeTimeoutMs) {
        check(vitcp);
        try {
            return serverSettings(handshakeTimeoutMs);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("TLS: " + e.getMessage(), e);
        }
    }

    /** A client's settings after {@link #check}, or null without --tls; IllegalArgumentException as {@link #server}. */
    TlsSettings client(boolean vitcp) {
        return client(vitcp, TlsSettings.DEFAULT_HANDSHAKE_TIMEOUT_MILLIS);
    }

    /** As {@link #client(boolean)}, the handshake given {@code handshakeTimeoutMs} to complete. */
    TlsSettings client(boolean vitcp, long handshakeTimeoutMs) {
        check(vitcp);
        try {
            return clientSettings(handshakeTimeoutMs);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("TLS: " + e.getMessage(), e);
        }
    }

    /** The client wire of {@code wire} on {@code stack}, inside TLS when --tls is given. */
    ClientWire clientWire(WireOptions wire, IwarpStack stack, int threads) {
        ToolWire tool = wire.tool();
        return tool.clientWire(stack, threads, client(!tool.carriesTls()));
    }

    /**
     * demo's server and client settings, or null without --tls: a self-signed certificate the client
     * pins, or with --psk-file/--psk-env that PSK on both sides.
     */
    TlsSettings[] demoPair(boolean vitcp) {
        check(vitcp);
        if (!tls) {
            return null;
        }
        if (cert != null || trust != null || pin != null || serverName != null) {
            throw new IllegalArgumentException("demo --tls makes its own certificate: only --psk-file or --psk-env apply");
        }
        try {
            if (pskFile != null || pskEnv != null) {
                TlsSettings s = TlsSettings.builder().psk(psk()).build();
                return new TlsSettings[] {s, s};
            }
            TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("iwarp-demo", Duration.ofDays(1));
            return new TlsSettings[] {TlsSettings.builder().identity(self).build(),
                    TlsSettings.builder().pin(self.fingerprint()).build()};
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("TLS: " + e.getMessage(), e);
        }
    }

    private TlsSettings serverSettings(long handshakeTimeoutMs) throws IOException, GeneralSecurityException {
        if (!tls) {
            return null;
        }
        TlsSettings.Builder b = common().handshakeTimeoutMillis(handshakeTimeoutMs);
        if (cert == null && pskFile == null && pskEnv == null) {
            TlsCertificates.CertifiedKey self = TlsCertificates.selfSigned("iwarp-server", Duration.ofDays(365));
            b.identity(self);
            LOG.info("TLS: self-signed certificate for localhost, SHA-256 fingerprint {} (clients: ping --tls --pin {})",
                    self.fingerprint(), self.fingerprint());
        }
        if (trust != null || pin != null) {
            b.clientAuth(TlsSettings.ClientAuth.REQUIRE);
        }
        return b.build();
    }

    private TlsSettings clientSettings(long handshakeTimeoutMs) throws IOException, GeneralSecurityException {
        if (!tls) {
            return null;
        }
        TlsSettings.Builder b = common().handshakeTimeoutMillis(handshakeTimeoutMs);
        if (serverName != null) {
            b.serverName(serverName);
        }
        return b.build();
    }
}
